"""Client benchmarks with Kafka's own perf tools (issue #8): plan, run, summarise, report.

The harness never talks to a cluster itself: it hands each command line to a runner callable
(`run(command) -> output`), so the lab can execute it in a container and unit tests can fake it.

    parsers  ProducerPerformance / ConsumerPerformance / EndToEndLatency output -> dataclasses
    plan     Case, Endpoint, ToolSettings, build_plan(), comparisons(), interleave()
    runner   run_plan(plan, run, ...) -> list[Measurement]
    stats    summarize(), summarize_measurements(), compare()
    report   render_report(), write_report(), machine_description()
    chart    write_chart() (matplotlib, imported only when drawing)

ZooKeeper vs KRaft (the kraft-vs-zk cases, issue #14):

    modes        the cases: ModeTarget, ScenarioSettings, mode_cases(), the scenarios' sizes
    scenarios    `python -m kafkakit.bench.scenarios`: one run of partitions or shutdown, or a topic
    failover     the failover scenario; acks: its producer and longest_ack_gap()
    nodes        the lab's hosts: inventory view, host commands, controllers, health
    layout       replica assignments
    mode_report  the report section: medians per mode, ratio, the winner sentences

A leader's host lost (the leader-failover cases, issue #47):

    leader_cases     the cases, in a group of their own; the spare broker a small data centre needs
    leader_failover  one run: the kill, the metadata watch, the figures, the settings read from hosts
    spare            `python -m kafkakit.bench.spare up|down`: a spare lab broker in and out of a DC
    leader_report    the report section: the windows against the 6 s aim, the accounting, the settings

Change data capture at a fixed commit rate (the cdc-<rate> case, issue #48):

    cdc          the pacing, the SQL, envelope fields, percentiles, the figures, the case, the section
    cdc_run      `python -m kafkakit.bench.cdc_run`: one run against the lab
"""

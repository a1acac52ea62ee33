"""Client benchmarks with Kafka's own perf tools (issue #8): plan, run, summarise, report.

The harness never talks to a cluster itself: it hands each command line to a runner callable
(`run(command) -> output`), so the lab can execute it in a container and unit tests can fake it.

    parsers  ProducerPerformance / ConsumerPerformance / EndToEndLatency output -> dataclasses
    plan     Case, Endpoint, ToolSettings, build_plan(), comparisons(), interleave()
    runner   run_plan(plan, run, ...) -> list[Measurement]
    stats    summarize(), summarize_measurements(), compare()
    report   render_report(), write_report(), machine_description()
    chart    write_chart() (matplotlib, imported only when drawing)
"""

"""MirrorMaker 2 and disaster recovery: flows, lag, latency and the DR drill's client side."""

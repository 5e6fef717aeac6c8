"""The mysql datasource: its class in ``source``, its driver code beside it."""

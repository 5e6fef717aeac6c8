"""The sqlite datasource: its class in ``source``, its driver code beside it."""

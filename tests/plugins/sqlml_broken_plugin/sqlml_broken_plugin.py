"""A package whose entry point names a family it does not declare."""

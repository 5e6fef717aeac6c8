"""A toy backend for sqlml, installed with pip (entry point ``sqlml.backends``): ``backend``
declares it and stays cheap to import; ``record`` keeps its runs, ``views`` shows them in
``sqlml ui``."""

"""Interactive front ends: the shell and the Jupyter magic."""

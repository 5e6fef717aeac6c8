"""Controllers' behaviour for the loopback stand-in (tests/kube_standin.py), from their source."""

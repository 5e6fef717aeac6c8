"""An entry point sqlml refuses: a backend whose name is taken."""

from sqlml.backends import Backend


class ClashingBackend(Backend):
    """A backend that calls itself ``local``, as sqlml's own does."""

    name = "local"
    target = "clashing"

    def compile(self, program, args):
        raise NotImplementedError

    def run(self, program, args, datasource, fmt, on_result=None):
        raise NotImplementedError


CLASHING_BACKEND = ClashingBackend()

"""The Dockerfile builds from one base image, named by a valid reference (a placeholder
left in it would break every build, and no test here runs Docker)."""

from __future__ import annotations

import re
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parents[1] / "Dockerfile"
# distribution/reference's grammar, simplified: name[:tag][@sha256:64 hex digits]
REFERENCE = re.compile(
    r"[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*"
    r"(:[\w][\w.-]{0,127})?(@sha256:[0-9a-f]{64})?"
)


def test_the_dockerfile_has_one_base_image_named_by_a_valid_reference():
    bases = [
        line.split()[1]
        for line in DOCKERFILE.read_text().splitlines()
        if line.upper().startswith("FROM ")
    ]
    assert len(bases) == 1, bases
    assert REFERENCE.fullmatch(bases[0]), bases[0]

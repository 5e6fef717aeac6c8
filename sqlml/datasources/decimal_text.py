"""Numbers as decimal text, for whole arrays at once with numpy.

Each value becomes a row of a byte matrix and a mask of the bytes that make up its text.
Floats are written with 17 significant digits (trailing zeros dropped), which read back as
exactly the same double: the digits come from the 64-bit mantissa times a 64-bit mantissa
of a power of ten (the top half of the 128-bit product), correctly rounded to within 0.03 of
a unit in the 17th digit, well inside the half unit in the last place that reading needs.
"""

from __future__ import annotations

import numpy as np

_Q_MIN, _Q_MAX = -300, 350  # the powers of ten that scale a double to 17 digits
_LOG10_2 = float(np.log10(2))
_M32, _S32, _ONE = np.uint64(0xFFFFFFFF), np.uint64(32), np.uint64(1)
_ZERO = ord("0")


def _powers_of_ten() -> tuple[np.ndarray, np.ndarray]:
    """10**q ~ mantissa * 2**exponent, the mantissa in [2**63, 2**64) rounded to nearest."""
    mantissas, exponents = [], []
    for q in range(_Q_MIN, _Q_MAX + 1):
        if q >= 0:
            power = 10**q
            exponent = power.bit_length() - 64
            rounded = ((power >> (exponent - 1)) + 1) >> 1 if exponent > 0 else 0
            mantissa = rounded if exponent > 0 else power << -exponent
        else:
            divisor = 10**-q
            shift = divisor.bit_length() + 63
            mantissa, exponent = ((1 << (shift + 1)) // divisor + 1) >> 1, -shift
        if mantissa >> 64:
            mantissa, exponent = mantissa >> 1, exponent + 1
        mantissas.append(mantissa)
        exponents.append(exponent)
    return np.array(mantissas, dtype=np.uint64), np.array(exponents, dtype=np.int64)


_MANTISSAS, _EXPONENTS = _powers_of_ten()


def float_text(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Finite float64 ``values`` as ``[-]<digits>e[-]<exponent>`` (``15e-1`` for 1.5): the
    byte matrix (rows x 23) and the mask of each row's bytes. NaN and infinity read as 0."""
    x = np.where(np.isfinite(values), values, 0.0)
    fraction, exponent = np.frexp(np.abs(x))  # exact: x = m * 2**(exponent - 64)
    exponent = exponent.astype(np.int64)
    m = (fraction * 2.0**64).astype(np.uint64)
    q = 16 - np.floor((exponent - 1) * _LOG10_2).astype(np.int64)  # at most one too many
    digits = _scaled(m, exponent, q)
    over = np.flatnonzero(digits >= np.uint64(10**17))
    q[over] -= 1
    digits[over] = _scaled(m[over], exponent[over], q[over])
    text = decimal_digits(digits, 17)
    zero = x == 0
    trailing = np.where(zero, 16, np.argmax(text[:, ::-1] != _ZERO, axis=1))
    power = np.where(zero, 0, trailing - q)
    magnitude = np.abs(power).astype(np.uint64)
    data = np.empty((len(x), 23), np.uint8)
    keep = np.empty((len(x), 23), bool)
    data[:, 0], keep[:, 0] = ord("-"), np.signbit(x)
    data[:, 1:18], keep[:, 1:18] = text, np.arange(17) < (17 - trailing)[:, None]
    data[:, 18], keep[:, 18] = ord("e"), True
    data[:, 19], keep[:, 19] = ord("-"), power < 0
    data[:, 20:], keep[:, 20:] = decimal_digits(magnitude, 3), _significant(magnitude, 3)
    return data, keep


def int_text(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integers (int64 or uint64 below 2**63) as decimal text: matrix (rows x 20) and mask."""
    signed = values.astype(np.int64, copy=False)
    negative = signed < 0
    magnitude = signed.view(np.uint64).copy()
    magnitude[negative] = ~magnitude[negative] + _ONE  # two's complement: -2**63 too
    data = np.empty((len(values), 20), np.uint8)
    keep = np.empty((len(values), 20), bool)
    data[:, 0], keep[:, 0] = ord("-"), negative
    data[:, 1:], keep[:, 1:] = decimal_digits(magnitude, 19), _significant(magnitude, 19)
    return data, keep


def decimal_digits(values: np.ndarray, width: int) -> np.ndarray:
    """uint64 ``values`` below 10**width as ASCII digits, right-aligned with leading zeros."""
    out = np.empty((len(values), width), np.uint8)
    if width > 9:  # nine digits at a time in int64, which divides faster than uint64
        high, low = np.divmod(values, np.uint64(10**9))
        parts = [(high, 0, width - 9), (low, width - 9, width)]
    else:
        parts = [(values, 0, width)]
    for part, start, stop in parts:
        rest = part.astype(np.int64)
        for i in range(stop - 1, start - 1, -1):
            rest, out[:, i] = np.divmod(rest, 10)
    out += _ZERO
    return out


def _significant(magnitude: np.ndarray, width: int) -> np.ndarray:
    """The mask of the digits of ``magnitude`` without leading zeros (one digit for 0)."""
    count = np.ones(len(magnitude), np.int64)
    for k in range(1, width):
        count += magnitude >= np.uint64(10**k)
    return np.arange(width) >= (width - count)[:, None]


def _scaled(m: np.ndarray, exponent: np.ndarray, q: np.ndarray) -> np.ndarray:
    """round(m * 2**(exponent - 64) * 10**q), from the top 64 bits of m times 10**q's mantissa."""
    high = _high_product(m, _MANTISSAS[q - _Q_MIN])
    shift = (-(exponent + _EXPONENTS[q - _Q_MIN])).astype(np.uint64)  # 5 to 11
    return ((high >> (shift - _ONE)) + _ONE) >> _ONE


def _high_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The top 64 bits of the 128-bit products of uint64 ``a`` and ``b``, from 32-bit halves."""
    a0, a1, b0, b1 = a & _M32, a >> _S32, b & _M32, b >> _S32
    cross0, cross1 = a0 * b1, a1 * b0
    middle = ((a0 * b0) >> _S32) + (cross0 & _M32) + (cross1 & _M32)
    return a1 * b1 + (cross0 >> _S32) + (cross1 >> _S32) + (middle >> _S32)

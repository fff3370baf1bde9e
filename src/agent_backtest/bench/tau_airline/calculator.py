"""The ``calculate`` tool's arithmetic: Python's own syntax and numbers, without ``eval``.

τ-bench evaluates the expression as Python, once it holds only digits, ``+ - * / ( ) .`` and
spaces, and answers the result rounded to 2 places, or ``Error: <the exception>``. Parsing it
with :mod:`ast` and evaluating the tree here gives the same answers and the same error texts,
with no code run and no exponent left to grow without bound.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

__all__ = ["evaluate"]

ALLOWED = frozenset("0123456789+-*/(). ")
MAX_EXPONENT = 100_000
"""Above this an integer power of a base beyond ±1 cannot become a float anyway; it is refused
with the error the float conversion would give, before the integer grows for minutes."""

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}


def evaluate(expression: str) -> str:
    """The tool's answer to ``expression``: the value rounded to 2 places, or ``Error: …``."""
    if not all(char in ALLOWED for char in expression):
        return "Error: invalid characters in expression"
    try:
        # eval() skips leading spaces of a string; ast.parse would see an indentation.
        tree = ast.parse(expression.lstrip(" "), filename="<string>", mode="eval")
        return str(round(float(_value(tree.body)), 2))
    except (ArithmeticError, SyntaxError, TypeError, ValueError) as exc:
        return f"Error: {exc}"


def _value(node: ast.expr) -> Any:
    """The value of one node of an expression made of the allowed characters."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return BINARY[type(node.op)](left, right)
    if isinstance(node, ast.Call):  # "(2)(3)": Python calls the number
        raise TypeError(f"'{type(_value(node.func)).__name__}' object is not callable")
    raise TypeError(f"unsupported expression: {ast.unparse(node)}")


def _check_power(base: Any, exponent: Any) -> None:
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and abs(base) > 1
        and exponent > MAX_EXPONENT
    ):
        raise OverflowError("int too large to convert to float")

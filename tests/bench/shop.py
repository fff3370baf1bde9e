"""A tiny real tool environment for the bench tests: a shop with stock, orders and a hand-off."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, ClassVar

from agent_backtest.bench.environment import ToolOutcome
from agent_backtest.bench.models import Case

POLICY = "You are the shop's assistant. Look an item up before you order it."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "How many of an item are in stock.",
            "parameters": {
                "type": "object",
                "properties": {"item": {"type": "string"}},
                "required": ["item"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "order",
            "description": "Order a quantity of an item.",
            "parameters": {
                "type": "object",
                "properties": {"item": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["item", "quantity"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "transfer_to_human",
            "description": "Hand the conversation to a person; it ends the chat.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]


class ShopEnvironment:
    """Stock per item (from the case's metadata.stock), the orders placed, and a hand-off."""

    name = "shop"

    def __init__(self) -> None:
        self.stock: dict[str, int] = {}
        self.orders: list[dict[str, Any]] = []
        self.transferred = False

    def reset(self, case: Case) -> None:
        self.stock = dict(case.metadata.get("stock", {"apple": 5, "pear": 1}))
        self.orders, self.transferred = [], False

    def tools(self) -> list[dict[str, Any]]:
        return json.loads(json.dumps(TOOLS))

    def policy(self) -> str | None:
        return POLICY

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        if tool == "lookup":
            item = str(arguments.get("item"))
            return ToolOutcome(json.dumps({"item": item, "stock": self.stock.get(item, 0)}))
        if tool == "order":
            item, quantity = str(arguments.get("item")), int(arguments.get("quantity", 0))
            if self.stock.get(item, 0) < quantity:
                return ToolOutcome(f"not enough {item} in stock", error=True)
            self.stock[item] -= quantity
            self.orders.append({"item": item, "quantity": quantity})
            return ToolOutcome(json.dumps({"ordered": quantity, "item": item}))
        if tool == "transfer_to_human":
            self.transferred = True
            return ToolOutcome("transferred")
        return ToolOutcome(f"unknown tool {tool}", error=True)

    def state_hash(self) -> str:
        state = {"stock": self.stock, "orders": self.orders, "transferred": self.transferred}
        return "sha256:" + hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()

    @property
    def done(self) -> bool:
        return self.transferred


class SpyShop(ShopEnvironment):
    """The shop, recording every call any instance receives (reset, tools, policy, call)."""

    seen: ClassVar[list[str]] = []

    def reset(self, case: Case) -> None:
        SpyShop.seen.append("reset " + case.model_dump_json())
        super().reset(case)

    def tools(self) -> list[dict[str, Any]]:
        SpyShop.seen.append("tools")
        return super().tools()

    def policy(self) -> str | None:
        SpyShop.seen.append("policy")
        return super().policy()

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        SpyShop.seen.append(f"call {tool} {json.dumps(dict(arguments))}")
        return super().call(tool, arguments)


class BrokenShop(ShopEnvironment):
    """A shop whose order tool raises: an engineering error, never a reward."""

    def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        if tool == "order":
            raise RuntimeError("the order database is down")
        return super().call(tool, arguments)


def ordered_grader(given: Any) -> Any:
    """A user's own grader: 1 when the transcript has an order call, else 0."""
    from agent_backtest.bench.graders import Component

    names = [
        call["function"]["name"]
        for message in given.messages
        for call in message.get("tool_calls") or []
    ]
    return Component(1.0 if "order" in names else 0.0, None if "order" in names else "no order")

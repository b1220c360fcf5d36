"""Inventory answers (TextWorld's object tree has no names, so the adapter asks the game)."""

from __future__ import annotations

from cairn.adapters.game.jericho_game import parse_inventory


def test_inventory_answers_are_parsed_into_item_names() -> None:
    assert parse_inventory("You are carrying: an iron key, a lamp and some rope.") == [
        "iron key",
        "lamp",
        "rope",
    ]
    assert parse_inventory("You are carrying nothing.") == []
    assert parse_inventory("You are empty-handed.") == []

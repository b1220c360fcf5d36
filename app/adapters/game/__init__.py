"""Game adapters: Jericho-backed games and the TextWorld-authored demo world."""

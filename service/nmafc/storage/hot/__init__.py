"""The Hot tier: the LanceDB working-set table and its RAM cache."""

"""The memory model as pure functions over plain values: no I/O, no frameworks."""

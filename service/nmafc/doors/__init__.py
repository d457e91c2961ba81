"""What the doors beside the REST API share: one agent's memory behind one interface."""

"""Adapters that let other agent frameworks use NMAFC as their memory."""

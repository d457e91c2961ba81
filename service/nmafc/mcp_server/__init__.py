"""NMAFC as an MCP server: the memory tools over Streamable HTTP (``/mcp``) and stdio.

``tools`` defines the tools; ``server`` builds the SDK's server over a backend resolver;
``http`` mounts it on the service's port behind the REST API's authentication; ``stdio``
serves one agent to a desktop client (``nmafc mcp``).
"""

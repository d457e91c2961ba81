"""The HTTP headers that name who calls and for which agent and conversation.

One definition for the routes, the client and the load-balancer configurations in
``deploy/`` (a test checks those hash on these names): a replica keeps a conversation's
working set warm only if the balancer sends that conversation's requests to it.
"""

from __future__ import annotations

AUTHORIZATION = "Authorization"
AGENT = "X-Agent-ID"
CONVERSATION = "X-Conversation-ID"

# What a scope-affinity balancer hashes, in this order. An agent-bound key names its agent
# by itself (X-Agent-ID may then be omitted), so the key is part of the hash: the same key,
# agent and conversation always give the same value, whichever of them a client sends.
ROUTING = (AUTHORIZATION, AGENT, CONVERSATION)

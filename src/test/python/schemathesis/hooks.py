"""Schemathesis hooks of SchemathesisTest (loaded through the `hooks` line of the configuration it writes)."""

import json

import schemathesis
from hypothesis import strategies as st
from schemathesis.graphql import nodes

# The W&B schema's own scalars (openapi/wandb.graphql): JSON as a string or a value, an RFC 3339 time, a 64-bit
# integer. Schemathesis generates values only for the scalars it knows of.
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=5,
)
schemathesis.graphql.scalar("JSONString", _json.map(lambda value: nodes.String(json.dumps(value))))
schemathesis.graphql.scalar("JSON", _json.map(lambda value: nodes.String(json.dumps(value))))
schemathesis.graphql.scalar(
    "DateTime",
    st.datetimes().map(lambda value: nodes.String(value.isoformat() + "Z")),
)
schemathesis.graphql.scalar("Int64", st.integers(-(2**63), 2**63 - 1).map(nodes.Int))


@schemathesis.check
def graphql_no_server_failure(ctx, response, case):
    """No 5xx answer to a GraphQL document.

    Schemathesis's own GraphQL check counts every error whose classification is graphql-java's DataFetchingException
    as a server error, and the W&B protocol refuses bad input (an id of nothing, an empty name) with exactly such an
    error, answered 4xx with `extensions.status` and `extensions.code`: a refusal, not a failure.
    """
    if response.status_code >= 500:
        raise AssertionError(f"GraphQL server error: status {response.status_code}: {response.text[:500]}")

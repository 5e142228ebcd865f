"""Schemathesis hooks of SchemathesisTest (loaded through the `hooks` line of the configuration it writes)."""

import json
import re
from pathlib import Path

import schemathesis
import tomllib
from hypothesis import strategies as st
from schemathesis.graphql import nodes
from schemathesis.specs.openapi.checks import positive_data_acceptance

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


def _load_refusals(directory):
    """The documented refusals of requests valid by their schema: `{"METHOD /path": [(status, pattern, contains)]}`."""
    refusals = {}
    for file in sorted(directory.glob("*.toml")):
        for entry in tomllib.loads(file.read_text(encoding="utf-8"))["refusal"]:
            if not entry.get("rule"):
                raise ValueError(f"{file.name}: a refusal without the rule its description states: {entry}")
            rule = (entry["status"], re.compile(entry["message"]), entry.get("request_contains"))
            refusals.setdefault(entry["operation"], []).append(rule)
    return refusals


_REFUSALS = _load_refusals(Path(__file__).parent / "refusals")


def _messages(response):
    """The error messages of an answer, in any of the interfaces' error shapes; else its whole text."""
    try:
        body = json.loads(response.text)
    except ValueError:
        return [response.text]
    if isinstance(body, dict):
        if isinstance(body.get("errors"), list):  # problem details' field errors, W&B's errors
            return [str(error.get("message")) for error in body["errors"] if isinstance(error, dict)]
        if isinstance(body.get("error"), dict):  # OpenAI's error object
            return [str(body["error"].get("message"))]
        if isinstance(body.get("detail"), list):  # the datasets API's validation errors
            return [str(error.get("msg")) for error in body["detail"] if isinstance(error, dict)]
        if isinstance(body.get("detail"), str):
            return [body["detail"]]
    return [response.text]


def _request_text(case):
    """Every string a request carries (keys and values of its parameters and body), joined."""
    return "\n".join(_strings([case.path_parameters, case.query, case.headers, case.cookies, case.body]))


def _strings(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif value is not None:
        yield str(value)


@schemathesis.check
def positive_data_within_documented_refusals(ctx, response, case):
    """Schemathesis's `positive_data_acceptance`, except for the refusals the contracts state in words.

    A request valid by its schema may still break a rule no JSON Schema states: a value against another or against the
    path (a call's project), against stored state (an unknown cursor), a backend's capability, or the global rule of
    no NUL in a stored string. Each such rule is in its operation's description (or the document's) and in
    `refusals/<contract>.toml`; an answer passes when each of its error messages matches a refusal of its operation
    (with its status, and its `request_contains` found in the request when given). Any other refusal fails as the
    built-in check does.
    """
    try:
        return positive_data_acceptance(ctx, response, case)
    except AssertionError:
        operation = f"{case.operation.method.upper()} {case.operation.path}"
        rules = _REFUSALS.get(operation, []) + _REFUSALS.get("*", [])
        messages = _messages(response)
        if messages and all(_documented(rules, response.status_code, message, case) for message in messages):
            return None
        raise


def _documented(rules, status, message, case):
    return any(
        status == rule_status and pattern.search(message) and (contains is None or contains in _request_text(case))
        for rule_status, pattern, contains in rules
    )

"""Worklane's schemathesis hooks, loaded through SCHEMATHESIS_HOOKS by test/schemathesis.int.test.ts.

Every path of the API names the caller's team (`/teams/{team}/...`), and most name an organization
and a project of it. Generated at random, those ids would make nearly every request a 403 or 404
and nothing deeper would be tested. So a case whose path is meant to be valid gets the first test
team's ids; a case whose path was generated to be invalid (a negative case of a path parameter)
keeps its values, so that their rejection is still checked. Other teams' ids are what the second
identity and the object_level_authorization check are for.
"""

import os
import uuid

import schemathesis
from schemathesis.core.parameters import ParameterLocation

FIXED = {
    name: int(os.environ[variable])
    for name, variable in (
        ("team", "WORKLANE_TEAM_ID"),
        ("organization", "WORKLANE_ORGANIZATION_ID"),
        ("project", "WORKLANE_PROJECT_ID"),
    )
    if os.environ.get(variable)
}


def unique_idempotency_key(case):
    """A POST's Idempotency-Key, when it is meant to be valid, made unique: generated keys repeat
    ("0", "00"..., the document's example), and a repeated key with another body is refused (422)
    by design. Invalid ones (a negative case of the header) are kept, so that their rejection is
    still checked."""
    meta = case._meta
    if case.headers and "Idempotency-Key" in case.headers and not (meta is not None and meta.is_negative_at(ParameterLocation.HEADER)):
        case.headers["Idempotency-Key"] = str(uuid.uuid4())


@schemathesis.hook
def before_add_examples(context, examples):
    # The examples phase does not run map_case.
    for case in examples:
        unique_idempotency_key(case)


@schemathesis.hook
def map_case(context, case):
    unique_idempotency_key(case)
    meta = case._meta
    if meta is not None and meta.is_negative_at(ParameterLocation.PATH):
        return case
    if case.path_parameters:
        for name, value in FIXED.items():
            if name in case.path_parameters:
                case.path_parameters[name] = value
    return case

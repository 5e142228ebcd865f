package dev.fulcrum.inference;

import dev.fulcrum.accounts.Caller;

/** The authenticated user of a completion and the project its usage is counted for. */
public record InferenceCaller(Caller caller, String entity, String project) {
}

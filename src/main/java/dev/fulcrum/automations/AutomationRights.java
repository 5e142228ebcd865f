package dev.fulcrum.automations;

import java.util.Collection;
import java.util.Locale;

import dev.fulcrum.accounts.Role;

/**
 * The rights an automation needs from the user it acts for ({@code automations.acts_as}): the member role on the
 * webhook's team to use its webhook, the admin role there to put secret values into the payload (granted secrets,
 * {@code $NAME} / <code>${NAME}</code>, <code>${ACCESS_TOKEN}</code>, the webhook's own secrets). Server administrators
 * have every role. Saving checks them for the caller; every send checks them again for the user the automation acts for
 * ({@link DeliveryDispatcher}, with {@link #ENTITLED} in the statement that leases the delivery).
 */
final class AutomationRights {

    /**
     * Whether the user an automation acts for may send one of its deliveries now, in SQL over {@code l} (the delivery),
     * {@code a} (the automation), {@code u} (its {@code acts_as} user) and {@code m} (that user's membership of the
     * delivery's webhook's team), the last three left-joined. A delivery carries secrets when the automation's payload
     * uses them now or its body was rendered with some.
     */
    static final String ENTITLED = "coalesce(case when a.uses_secrets or l.secrets is not null then "
            + Role.atLeastInSql("m.role", required(true)) + " else " + Role.atLeastInSql("m.role", required(false))
            + " end, false)";

    private AutomationRights() {
    }

    /** Whether a payload with these variables and grants puts a secret value into the body. */
    static boolean usesSecrets(Collection<String> payloadVariables, Collection<String> granted) {
        return !granted.isEmpty()
                || payloadVariables.stream().anyMatch(v -> AutomationVariables.SECRET_NAME.matcher(v).matches());
    }

    /** The role an automation needs on its webhook's team. */
    static Role required(boolean usesSecrets) {
        return usesSecrets ? Role.ADMIN : Role.MEMBER;
    }

    /** What that role allows, for messages. */
    static String purpose(boolean usesSecrets) {
        return usesSecrets
                ? "putting secret values into an automation's payload (granted_secrets, $NAME, ${NAME}, "
                        + "${ACCESS_TOKEN}) needs the admin role on the team that owns the secrets"
                : "using a team's webhook or Slack integration in an automation needs the member role on the team";
    }

    /**
     * Why an automation may not act for {@code username} (null: the user no longer exists) whose role on {@code team}
     * is {@code role} (null: not a member); for the delivery log and the automation's {@code disabled_reason}.
     */
    static String refusal(String username, String role, boolean usesSecrets, String team) {
        if (username == null) {
            return "The user this automation acted for no longer exists; " + purpose(usesSecrets) + " (" + team + ")";
        }
        String who = "User " + username + ", for whom this automation acts,";
        if (role == null) {
            return who + " is no longer a member of team " + team + "; " + purpose(usesSecrets);
        }
        return who + " is " + role.toLowerCase(Locale.ROOT) + " of team " + team + "; " + purpose(usesSecrets);
    }
}

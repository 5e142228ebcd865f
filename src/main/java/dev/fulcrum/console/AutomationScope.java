package dev.fulcrum.console;

import java.util.List;

import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.WebhookDeliveryPage;

/** Where automations live, a project or a registry, with the API operations of that scope. */
public interface AutomationScope {

    /** What the pages call the scope, e.g. {@code project ml/churn}. */
    String getTitle();

    /** The address of the scope's automation list. */
    String path();

    default String getPath() {
        return path();
    }

    /** Whether the caller administers the scope, and so may change its automations. */
    boolean isEditable();

    List<String> events();

    List<Automation> list();

    Automation get(long id);

    Automation create(AutomationCreate body);

    Automation update(long id, AutomationUpdate body);

    void delete(long id, String confirm);

    WebhookDeliveryPage deliveries(long id, String state, Integer limit, Long before, String createdSince);

    void redeliver(long id, long delivery);

    void redeliverFailed(long id, String since);
}

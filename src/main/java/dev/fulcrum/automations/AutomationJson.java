package dev.fulcrum.automations;

import jakarta.inject.Singleton;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.jackson.ObjectMapperCustomizer;

import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationMetricChange;
import dev.fulcrum.automations.api.model.AutomationMetricThreshold;
import dev.fulcrum.automations.api.model.AutomationMetricZscore;
import dev.fulcrum.automations.api.model.AutomationRunFilter;
import dev.fulcrum.automations.api.model.AutomationScope;

/** Fields of an automation that do not apply to its event or scope are left out of responses, not sent as null. */
@Singleton
public class AutomationJson implements ObjectMapperCustomizer {

    @JsonInclude(JsonInclude.Include.NON_NULL)
    private interface NonNull {
    }

    @Override
    public void customize(ObjectMapper mapper) {
        for (Class<?> type : new Class<?>[] { Automation.class, AutomationScope.class, AutomationRunFilter.class,
                AutomationMetricThreshold.class, AutomationMetricChange.class, AutomationMetricZscore.class }) {
            mapper.addMixIn(type, NonNull.class);
        }
    }
}

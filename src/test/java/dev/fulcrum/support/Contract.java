package dev.fulcrum.support;

import java.nio.file.Path;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.restassured.OpenApiValidationFilter;

/**
 * REST Assured filters that check every response against the published OpenAPI documents. Requests are not checked:
 * tests send invalid requests on purpose.
 */
public final class Contract {

    public static final OpenApiValidationFilter DATASETS = of("datasets");
    public static final OpenApiValidationFilter ACCOUNTS = of("accounts");
    public static final OpenApiValidationFilter TRAINING = of("training");
    public static final OpenApiValidationFilter EVENTS = of("events");
    public static final OpenApiValidationFilter RUNS = of("runs");
    public static final OpenApiValidationFilter ARTIFACTS = of("artifacts");
    public static final OpenApiValidationFilter AUTOMATIONS = of("automations");
    public static final OpenApiValidationFilter INFERENCE = of("inference");

    private Contract() {
    }

    public static OpenApiValidationFilter of(String document) {
        return new OpenApiValidationFilter(validator(document));
    }

    /** The validator behind {@link #of}, for tests that judge responses they did not send with REST Assured. */
    public static OpenApiInteractionValidator validator(String document) {
        return OpenApiInteractionValidator
                .createForSpecificationUrl(Path.of("openapi", document + ".yaml").toAbsolutePath().toUri().toString())
                .withLevelResolver(
                        LevelResolver.create().withLevel("validation.request", ValidationReport.Level.IGNORE).build())
                .build();
    }
}

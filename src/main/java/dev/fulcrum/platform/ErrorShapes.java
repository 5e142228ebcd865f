package dev.fulcrum.platform;

import static java.util.Map.entry;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;

import dev.fulcrum.accounts.api.ApiKeysApi;
import dev.fulcrum.accounts.api.ProjectsApi;
import dev.fulcrum.accounts.api.RegistriesApi;
import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.artifacts.api.ArtifactReferencesApi;
import dev.fulcrum.artifacts.api.ArtifactsApi;
import dev.fulcrum.artifacts.api.RegistryArtifactsApi;
import dev.fulcrum.automations.api.ProjectAutomationsApi;
import dev.fulcrum.automations.api.RegistryAutomationsApi;
import dev.fulcrum.automations.api.TeamSecretsApi;
import dev.fulcrum.automations.api.WebhooksApi;
import dev.fulcrum.datasets.api.DatasetsApi;
import dev.fulcrum.datasets.api.ObjectsApi;
import dev.fulcrum.datasets.api.TablesApi;
import dev.fulcrum.events.api.ProjectEventsApi;
import dev.fulcrum.events.api.RegistryEventsApi;
import dev.fulcrum.inference.api.InferenceCatalogApi;
import dev.fulcrum.inference.api.InferenceChatApi;
import dev.fulcrum.inference.api.InferenceModelsApi;
import dev.fulcrum.inference.api.InferenceUsageApi;
import dev.fulcrum.runs.api.RunsApi;
import dev.fulcrum.training.api.HealthApi;
import dev.fulcrum.training.api.ModelsApi;
import dev.fulcrum.training.api.TrainingJobsApi;
import dev.fulcrum.training.api.WorkersApi;
import dev.fulcrum.wandb.api.WandbFileStreamApi;
import dev.fulcrum.wandb.api.WandbGraphqlApi;
import dev.fulcrum.wandb.api.WandbTelemetryApi;

/**
 * Which error shape each generated interface answers in, and which interface a request belongs to: the one its matched
 * resource class implements, else the one with an operation at its path (a request refused before a resource method was
 * chosen: 405, 415, a body-size 413 of a pre-matching filter).
 */
final class ErrorShapes {

    enum Dialect {
        /** FastAPI's {@code {"detail": ...}}. */
        DETAIL,
        /** OpenAI's {@code {"error": {...}}} ({@link OpenAiError}). */
        OPENAI,
        /** RFC 9457 problem details. */
        PROBLEM,
        /** GraphQL's {@code {"errors": [{"message": ...}]}} (the W&B protocol). */
        GRAPHQL
    }

    private static final Map<Class<?>, Dialect> DIALECTS = Map.ofEntries(entry(DatasetsApi.class, Dialect.DETAIL),
            entry(TablesApi.class, Dialect.DETAIL), entry(ObjectsApi.class, Dialect.DETAIL),
            entry(HealthApi.class, Dialect.DETAIL), entry(ModelsApi.class, Dialect.DETAIL),
            entry(TrainingJobsApi.class, Dialect.DETAIL),
            // the workers' protocol is the platform's own, not the training API its clients call
            entry(WorkersApi.class, Dialect.PROBLEM), entry(InferenceChatApi.class, Dialect.OPENAI),
            entry(InferenceModelsApi.class, Dialect.OPENAI),
            // the model catalog and usage are administered through the management API
            entry(InferenceCatalogApi.class, Dialect.PROBLEM), entry(InferenceUsageApi.class, Dialect.PROBLEM),
            entry(ApiKeysApi.class, Dialect.PROBLEM), entry(ProjectsApi.class, Dialect.PROBLEM),
            entry(RegistriesApi.class, Dialect.PROBLEM), entry(TeamsApi.class, Dialect.PROBLEM),
            entry(UsersApi.class, Dialect.PROBLEM), entry(ArtifactReferencesApi.class, Dialect.PROBLEM),
            entry(ArtifactsApi.class, Dialect.PROBLEM), entry(RegistryArtifactsApi.class, Dialect.PROBLEM),
            entry(ProjectAutomationsApi.class, Dialect.PROBLEM), entry(RegistryAutomationsApi.class, Dialect.PROBLEM),
            entry(TeamSecretsApi.class, Dialect.PROBLEM), entry(WebhooksApi.class, Dialect.PROBLEM),
            entry(ProjectEventsApi.class, Dialect.PROBLEM), entry(RegistryEventsApi.class, Dialect.PROBLEM),
            entry(RunsApi.class, Dialect.PROBLEM), entry(WandbGraphqlApi.class, Dialect.GRAPHQL),
            entry(WandbFileStreamApi.class, Dialect.GRAPHQL), entry(WandbTelemetryApi.class, Dialect.GRAPHQL));

    /**
     * HTTP Basic is offered on the datasets API (with Weave's object API) and the W&B protocol only, as their clients
     * use it.
     */
    private static final Set<Class<?>> BASIC = Set.of(DatasetsApi.class, TablesApi.class, ObjectsApi.class,
            WandbGraphqlApi.class, WandbFileStreamApi.class, WandbTelemetryApi.class);

    /** An operation of a generated interface: its method, path and the media types of the bodies it reads. */
    record Operation(String method, Pattern path, List<String> consumes, Class<?> api) {
    }

    private static final List<Operation> OPERATIONS = operations();

    private ErrorShapes() {
    }

    /**
     * The generated interface a request belongs to, or null for a path no interface has (an unknown path, or a request
     * refused by the HTTP server before JAX-RS, such as {@link RequestLineLimit}'s 414).
     */
    static Class<?> api(Class<?> resource, String path) {
        if (resource != null) {
            for (Class<?> api : resource.getInterfaces()) {
                if (DIALECTS.containsKey(api)) {
                    return api;
                }
            }
        }
        String p = normalized(path);
        return OPERATIONS.stream().filter(o -> o.path().matcher(p).matches()).map(Operation::api).findFirst()
                .orElse(null);
    }

    static Dialect dialect(Class<?> api, String path) {
        return api != null ? DIALECTS.get(api) : byPrefix(normalized(path));
    }

    static boolean acceptsBasic(Class<?> api, String path) {
        if (api != null) {
            return BASIC.contains(api);
        }
        String p = normalized(path);
        return isDatasets(p);
    }

    /** The datasets API's paths, Weave's trace-server paths among them. */
    static boolean isDatasets(String p) {
        return p.startsWith("/v2/") || p.startsWith("/table/") || p.startsWith("/obj/") || p.startsWith("/objs/");
    }

    /** The media types the operation at {@code method} and {@code path} reads, empty when there is none. */
    static List<String> consumes(String method, String path) {
        String p = normalized(path);
        return OPERATIONS.stream().filter(o -> o.method().equals(method) && o.path().matcher(p).matches())
                .map(Operation::consumes).findFirst().orElse(List.of());
    }

    /**
     * Only for a path no generated interface has: the shape of the interface whose paths it extends, so that a client
     * mistyping a datasets URL still reads a FastAPI error.
     */
    private static Dialect byPrefix(String p) {
        if (isDatasets(p) || p.startsWith("/v1/preview/") || p.startsWith("/v1/health")
                || p.startsWith("/v1/system-check")) {
            return Dialect.DETAIL;
        }
        return p.startsWith("/v1/") ? Dialect.OPENAI : Dialect.PROBLEM;
    }

    static String normalized(String path) {
        String p = path == null || path.isEmpty() ? "/" : path.startsWith("/") ? path : "/" + path;
        return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }

    private static List<Operation> operations() {
        List<Operation> operations = new ArrayList<>();
        for (Class<?> api : DIALECTS.keySet()) {
            String base = api.isAnnotationPresent(Path.class) ? api.getAnnotation(Path.class).value() : "";
            for (Method m : api.getMethods()) {
                String verb = verb(m);
                if (verb == null) {
                    continue;
                }
                String template = normalized(
                        base + (m.isAnnotationPresent(Path.class) ? "/" + m.getAnnotation(Path.class).value() : ""))
                                .replaceAll("/+", "/");
                Consumes consumes = m.isAnnotationPresent(Consumes.class) ? m.getAnnotation(Consumes.class)
                        : api.getAnnotation(Consumes.class);
                operations.add(new Operation(verb, regex(template),
                        consumes == null ? List.of() : Arrays.asList(consumes.value()), api));
            }
        }
        return List.copyOf(operations);
    }

    private static String verb(Method m) {
        for (Annotation a : m.getAnnotations()) {
            HttpMethod verb = a.annotationType().getAnnotation(HttpMethod.class);
            if (verb != null) {
                return verb.value();
            }
        }
        return null;
    }

    /** A path template's parameters ({@code {name}}) match one segment each. */
    private static Pattern regex(String template) {
        StringBuilder regex = new StringBuilder();
        for (String part : template.split("\\{[^}]+}", -1)) {
            if (!regex.isEmpty()) {
                regex.append("[^/]+");
            }
            regex.append(Pattern.quote(part));
        }
        return Pattern.compile(regex.toString());
    }
}

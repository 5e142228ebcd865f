package dev.fulcrum.inference.catalog;

import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceException;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.narayana.jta.QuarkusTransactionException;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.vertx.core.Vertx;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.hub.HubException;
import dev.fulcrum.inference.hub.HubName;
import dev.fulcrum.inference.hub.HubPlan;
import dev.fulcrum.inference.hub.ModelPulls;
import dev.fulcrum.inference.hub.PullFinished;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The model catalog: the built-in model, the models of the configuration and those added through the admin API (table
 * {@code inference_models}, API keys sealed). Chat completions read an in-memory snapshot (never the database); this
 * replica's admin changes apply at once, other replicas' after {@code fulcrum.inference.catalog-refresh}.
 */
@ApplicationScoped
public class ModelCatalog implements ModelSource {

    private static final Logger LOG = Logger.getLogger(ModelCatalog.class);
    static final String CONFIG = "config";
    static final String ADMIN = "admin";
    static final int ID_MAX = 256;
    /** A GGUF model of the admin API computes as a configured one does by default. */
    private static final int GGUF_THREADS = 2;
    private static final int GGUF_CONTEXT = 4096;
    private static final int GGUF_PARALLEL = 1;

    @Inject
    InferenceConfig config;

    @Inject
    @Any
    Instance<Engine> engineBeans;

    @Inject
    Vertx vertx;

    @Inject
    ObjectMapper json;

    @Inject
    SecretCipher cipher;

    @Inject
    EntityManager em;

    @Inject
    ModelPulls pulls;

    /** A model and its backend; {@code pulling} while its file is being pulled (not listed, answering 503). */
    private record Entry(CatalogModel model, ServedModel served, boolean pulling) {
    }

    private volatile Map<String, Entry> entries = Map.of();
    private Map<String, Engine> engines;

    /** The engines by kind, known when the bean is made: the scheduled refresh may come before the start-up event. */
    @PostConstruct
    void findEngines() {
        Map<String, Engine> byKind = new HashMap<>();
        engineBeans.forEach(engine -> byKind.put(engine.kind(), engine));
        engines = Map.copyOf(byKind);
    }

    void start(@Observes StartupEvent event) {
        refresh();
    }

    /** A pull finished: a ready model is served from its file from now on. */
    void pulled(@Observes PullFinished event) {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOG.warn("Could not refresh the model catalog after a pull", e);
        }
    }

    @PreDestroy
    void stop() {
        entries.values().forEach(entry -> entry.served().backend().close());
    }

    @Override
    public int priority() {
        return 0;
    }

    @Override
    public CompletionStage<Optional<ServedModel>> find(String id) {
        Entry entry = entries.get(id);
        return CompletableFuture.completedFuture(entry == null ? Optional.empty() : Optional.of(entry.served()));
    }

    @Override
    public List<ServedModel> listed() {
        return entries.values().stream().filter(entry -> !entry.pulling()).map(Entry::served)
                .sorted(Comparator.comparing(ServedModel::id)).toList();
    }

    public List<CatalogModel> list() {
        return entries.values().stream().map(Entry::model).sorted(Comparator.comparing(CatalogModel::id)).toList();
    }

    public boolean contains(String id) {
        return entries.containsKey(id);
    }

    /**
     * Whether the model is one {@code fulcrum-worker} workers train ({@code trainable}, in the configuration or the
     * admin API), pulled or not: a pulled one's checkpoints are served on its file once its pull is ready.
     */
    public boolean trainedByWorkers(String id) {
        Entry entry = entries.get(id);
        return entry != null && entry.model().trainable();
    }

    /** The models marked as trained by {@code fulcrum-worker} workers. */
    public List<String> trainedByWorkers() {
        return entries.values().stream().map(Entry::model).filter(CatalogModel::trainable).map(CatalogModel::id)
                .sorted().toList();
    }

    /** The catalog model of that id, if there is one. */
    public Optional<CatalogModel> lookup(String id) {
        Entry entry = entries.get(id);
        return entry == null ? Optional.empty() : Optional.of(entry.model());
    }

    /** The served model of a catalog model (its backend). */
    ServedModel served(String id) {
        Entry entry = entries.get(id);
        if (entry == null) {
            throw InferenceFailure.modelNotFound(id);
        }
        return entry.served();
    }

    /** The replicas of the model's server and their state, as this gateway replica sees them; none for local models. */
    public List<ServerReplica> replicas(CatalogModel model) {
        return engine(model).replicas(model);
    }

    /** The engine that serves models of that catalog model's kind. */
    Engine engine(CatalogModel model) {
        Engine engine = engines.get(model.backend());
        if (engine == null) {
            throw new IllegalStateException("No engine serves the backend " + model.backend());
        }
        return engine;
    }

    public CatalogModel get(String id) {
        Entry entry = entries.get(id);
        if (entry == null) {
            throw ApiException.notFound("Model " + id + " not found");
        }
        return entry.model();
    }

    @Scheduled(every = "${fulcrum.inference.catalog-refresh:10s}", delayed = "${fulcrum.inference.catalog-refresh:10s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduledRefresh() {
        try {
            refresh();
        } catch (RuntimeException e) {
            LOG.warn("Could not refresh the model catalog", e);
        }
    }

    /** Rebuilds the snapshot; backends whose settings did not change are kept (with their connections). */
    synchronized void refresh() {
        Map<String, ModelPulls.Pulled> pulled = pulls.pulled();
        Map<String, CatalogModel> desired = new HashMap<>();
        for (CatalogModel model : stored(pulled)) {
            desired.put(model.id(), model);
        }
        config.models()
                .forEach((id, settings) -> desired.put(id, ConfiguredModels.model(id, settings, pulled.get(id))));
        if (config.builtin().enabled()) {
            String id = config.builtin().id();
            desired.put(id,
                    new CatalogModel(id, CatalogModel.BUILTIN, List.of(), null, null, null, 0, 0,
                            config.builtin().threads(), config.builtin().maxQueued(), config.builtin().maxTokens(),
                            CONFIG, null, null, List.of(), false));
        }
        Map<String, Entry> current = entries;
        Map<String, Entry> next = new HashMap<>();
        for (CatalogModel model : desired.values()) {
            next.put(model.id(), entry(model, pulled.get(model.id()), current.get(model.id())));
        }
        entries = Map.copyOf(next);
        for (Entry old : current.values()) {
            if (next.get(old.model().id()) != old) {
                // requests still running on the old backend finish first
                vertx.setTimer(Math.max(1, old.model().timeoutMs()) + 1000, t -> old.served().backend().close());
            }
        }
    }

    /**
     * A model's entry: the one it has when neither its settings nor, while its file is pulled, the pull's state changed
     * (its backend keeps its connections and loaded model); else a new one, served by its engine, or answering 503
     * while its file is being pulled.
     */
    private Entry entry(CatalogModel model, ModelPulls.Pulled pull, Entry existing) {
        boolean pulling = CatalogModel.GGUF.equals(model.backend()) && model.gguf() == null;
        String state = pull == null ? null : pull.state();
        if (existing != null && existing.model().equals(model) && (!pulling
                || existing.served().backend() instanceof PullingModel p && p.state().equals(String.valueOf(state)))) {
            return existing;
        }
        Backend backend = pulling
                ? new PullingModel(pull == null ? "the Hub" : pull.name(), String.valueOf(state), pulls)
                : engine(model).serve(model);
        return new Entry(model, new ServedModel(model.id(), model.rootOrId(), backend, model.fallbacks()), pulling);
    }

    /**
     * A model to add or change through the admin API: {@code baseUrl} and {@code baseUrls} are the one-replica and the
     * many-replica forms of the same setting (one of them at most); {@code routing}, {@code fallbacks} and
     * {@code reasoningFormat} null for the defaults.
     */
    public record Change(String backend, String baseUrl, List<String> baseUrls, String apiKey, String upstreamModel,
            String root, Integer connectTimeoutMs, Integer timeoutMs, Integer maxConcurrency, Integer maxQueue,
            Integer maxTokens, String ggufPath, String routing, List<String> fallbacks, String reasoningFormat,
            String pull, String revision, Boolean trainable) {

        /** The replicas' URLs, of either form. */
        List<String> urls() {
            return baseUrls != null ? baseUrls : baseUrl != null ? List.of(baseUrl) : List.of();
        }
    }

    public CatalogModel create(String id, Change change) {
        if (id == null || id.isBlank() || id.length() > ID_MAX || !id.strip().equals(id)) {
            throw ApiException
                    .invalid(Violation.of("Must be 1 to " + ID_MAX + " characters without leading or trailing spaces",
                            "value_error", "body", "id"));
        }
        CatalogChecks.check(id, change, entries::containsKey);
        if (entries.containsKey(id) && CONFIG.equals(entries.get(id).model().source())) {
            throw ApiException.conflict("Model " + id + " is configured in the application's configuration");
        }
        if (entries.containsKey(id)) {
            throw ApiException.conflict("Model " + id + " exists");
        }
        HubPlan plan = change.pull() == null ? null : plan(change);
        write(() -> {
            if (InferenceModel.findById(id) != null) {
                throw ApiException.conflict("Model " + id + " exists");
            }
            InferenceModel model = new InferenceModel();
            model.id = id;
            apply(model, change, seal(id, change.apiKey()));
            model.persistAndFlush();
            if (plan != null) {
                pulls.forget(id); // a pull left by a model of that id deleted on another replica
                em.flush();
                pulls.record(id, ADMIN, plan);
            }
        }, id);
        refresh();
        if (plan != null) {
            pulls.begin(id);
        }
        return get(id);
    }

    public CatalogModel update(String id, Change change) {
        CatalogModel existing = get(id);
        if (CONFIG.equals(existing.source())) {
            throw ApiException.conflict("Model " + id + " is configured in the application's configuration");
        }
        CatalogChecks.check(id, change, entries::containsKey);
        if (change.pull() != null) {
            throw ApiException.invalid(
                    Violation.of("A model is pulled when it is created: delete it and add it again to pull another",
                            "value_error", "body", "pull"));
        }
        write(() -> {
            InferenceModel model = InferenceModel.findById(id);
            if (model == null) {
                throw ApiException.notFound("Model " + id + " not found");
            }
            apply(model, change, change.apiKey() == null ? model.apiKeySealed : seal(id, change.apiKey()));
            model.updatedAt = em.createQuery("select offset datetime", OffsetDateTime.class).getSingleResult();
            em.flush();
            pulls.forget(id); // the settings name a file now (or another backend): a pull is over
        }, id);
        refresh();
        pulls.freeUnused();
        return get(id);
    }

    public void delete(String id) {
        CatalogModel existing = get(id);
        if (CONFIG.equals(existing.source())) {
            throw ApiException.conflict("Model " + id + " is configured in the application's configuration");
        }
        write(() -> {
            InferenceModel.deleteById(id);
            pulls.forget(id);
        }, id);
        refresh();
        pulls.freeUnused();
    }

    /** Starts a model's failed pull again (see {@link ModelPulls#retry}); 409 when it has none that failed. */
    public CatalogModel retryPull(String id) {
        get(id);
        ModelPulls.Retry retry;
        try {
            retry = pulls.retry(id);
        } catch (HubException e) {
            throw hubFailure(e);
        }
        switch (retry) {
            case NO_PULL ->
                    throw ApiException.conflict("Model " + id + " was not pulled by name: there is no pull to retry");
            case NOT_FAILED -> throw ApiException.conflict("The pull of model " + id
                    + " did not fail (it is under way, or ready): GET /api/v1/admin/models/" + id + " shows it");
            case QUEUED -> {
                refresh();
                pulls.begin(id);
            }
        }
        return get(id);
    }

    /** The files a change's {@code pull} names, asked of the Hub now, so that a wrong name is answered at once. */
    private HubPlan plan(Change change) {
        HubName name = HubName.parse(change.pull());
        try {
            return pulls.plan(name, change.revision() == null ? "main" : change.revision());
        } catch (HubException e) {
            throw hubFailure(e);
        }
    }

    /** What the Hub or the disk answered, as the admin API's error. */
    private static ApiException hubFailure(HubException e) {
        return switch (e.reason()) {
            case NOT_FOUND -> ApiException.notFound(e.getMessage());
            case UNREACHABLE -> ApiException.unavailable(e.getMessage());
            case NO_SPACE -> ApiException.storageFull(e.getMessage());
            case REFUSED, BAD_FILE -> ApiException.upstreamFailed(e.getMessage());
        };
    }

    /** The catalog's current settings of {@code model} (itself when it is gone meanwhile). */
    public CatalogModel latest(CatalogModel model) {
        Entry entry = entries.get(model.id());
        return entry == null ? model : entry.model();
    }

    /** A model's pull from the Hub, if it was pulled by name. */
    public Optional<dev.fulcrum.inference.hub.PullStatus> pull(String id) {
        return pulls.status(id);
    }

    private byte[] seal(String id, String apiKey) {
        return apiKey == null || apiKey.isEmpty() ? null : cipher.seal(apiKey, context(id));
    }

    private static String context(String id) {
        return "inference-model:" + id;
    }

    private static void apply(InferenceModel model, Change change, byte[] sealed) {
        model.backend = change.backend();
        List<String> urls = change.urls();
        model.baseUrl = urls.isEmpty() ? null : urls.get(0);
        model.baseUrls = urls.isEmpty() ? null : urls;
        model.routing = change.routing() == null ? CatalogModel.LEAST_OUTSTANDING : change.routing();
        model.fallbacks = change.fallbacks() == null ? List.of() : change.fallbacks();
        model.apiKeySealed = sealed;
        model.upstreamModel = blankToNull(change.upstreamModel());
        model.root = blankToNull(change.root());
        model.connectTimeoutMs = change.connectTimeoutMs() == null ? 5_000 : change.connectTimeoutMs();
        model.timeoutMs = change.timeoutMs() == null ? 120_000 : change.timeoutMs();
        model.maxConcurrency = change.maxConcurrency() == null ? 256 : change.maxConcurrency();
        model.maxQueue = change.maxQueue() == null ? 1024 : change.maxQueue();
        model.maxTokens = CatalogModel.BUILTIN.equals(change.backend()) ? null : change.maxTokens();
        model.ggufPath = CatalogModel.GGUF.equals(change.backend()) ? change.ggufPath() : null;
        model.trainable = CatalogModel.GGUF.equals(change.backend()) && Boolean.TRUE.equals(change.trainable());
        model.reasoningFormat = CatalogModel.GGUF.equals(change.backend())
                ? change.reasoningFormat() == null ? "auto" : change.reasoningFormat()
                : null;
    }

    /** Runs a change of the stored models in its own transaction; what the database refuses is answered. */
    private static void write(Runnable change, String id) {
        try {
            QuarkusTransaction.requiringNew().run(change);
        } catch (PersistenceException | QuarkusTransactionException e) {
            throw failure(e, id);
        }
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value;
    }

    /**
     * A value PostgreSQL refuses (SQLSTATE class 22: a NUL character, a string too long) is the client's error; a model
     * created at the same moment by another request (23505) exists.
     */
    private static ApiException failure(RuntimeException e, String id) {
        SQLException sql = null;
        for (Throwable cause = e; cause != null && sql == null; cause = cause.getCause()) {
            if (cause instanceof SQLException found) {
                sql = found;
            }
        }
        String state = sql == null ? null : sql.getSQLState();
        if (state != null && state.startsWith("22")) {
            return ApiException.invalid(Violation
                    .of("Invalid value: " + sql.getMessage().lines().findFirst().orElse(""), "value_error", "body"));
        }
        if ("23505".equals(state)) {
            return ApiException.conflict("Model " + id + " exists");
        }
        return ApiException.unavailable("Database unavailable");
    }

    private List<CatalogModel> stored(Map<String, ModelPulls.Pulled> pulled) {
        List<InferenceModel> stored;
        try {
            stored = QuarkusTransaction.requiringNew().call(() -> InferenceModel.<InferenceModel> listAll());
        } catch (PersistenceException | QuarkusTransactionException e) {
            throw new IllegalStateException("Cannot read the model catalog", e);
        }
        return stored.stream()
                .map(model -> new CatalogModel(model.id, model.backend,
                        model.baseUrls != null ? model.baseUrls
                                : model.baseUrl == null ? List.of() : List.of(model.baseUrl),
                        model.apiKeySealed == null ? null : cipher.open(model.apiKeySealed, context(model.id)),
                        model.upstreamModel, model.root, model.connectTimeoutMs, model.timeoutMs, model.maxConcurrency,
                        model.maxQueue, model.maxTokens, ADMIN,
                        ggufPath(model, pulled) == null ? null
                                : new CatalogModel.Gguf(ggufPath(model, pulled), GGUF_THREADS, GGUF_CONTEXT,
                                        GGUF_PARALLEL, model.reasoningFormat),
                        model.routing, model.fallbacks, model.trainable))
                .toList();
    }

    /** A stored GGUF model's file: its own, or the file of its pull once ready (null while pulling). */
    private static String ggufPath(InferenceModel model, Map<String, ModelPulls.Pulled> pulled) {
        if (model.ggufPath != null || !CatalogModel.GGUF.equals(model.backend)) {
            return model.ggufPath;
        }
        ModelPulls.Pulled pull = pulled.get(model.id);
        return pull == null ? null : pull.ggufPath();
    }
}

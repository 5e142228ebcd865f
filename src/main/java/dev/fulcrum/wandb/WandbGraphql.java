package dev.fulcrum.wandb;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.StorageFull;
import dev.fulcrum.platform.http.ErrorResponses;
import dev.fulcrum.platform.json.StorableText;

import graphql.ErrorType;
import graphql.ExecutionInput;
import graphql.ExecutionResult;
import graphql.GraphQL;
import graphql.GraphQLContext;
import graphql.GraphQLError;
import graphql.GraphqlErrorBuilder;
import graphql.execution.CoercedVariables;
import graphql.execution.DataFetcherExceptionHandler;
import graphql.execution.DataFetcherExceptionHandlerParameters;
import graphql.execution.DataFetcherExceptionHandlerResult;
import graphql.execution.preparsed.PreparsedDocumentEntry;
import graphql.execution.preparsed.PreparsedDocumentProvider;
import graphql.language.BooleanValue;
import graphql.language.FloatValue;
import graphql.language.IntValue;
import graphql.language.Node;
import graphql.language.NodeTraverser;
import graphql.language.NodeVisitorStub;
import graphql.language.StringValue;
import graphql.language.Value;
import graphql.scalar.GraphqlStringCoercing;
import graphql.schema.Coercing;
import graphql.schema.CoercingParseLiteralException;
import graphql.schema.GraphQLScalarType;
import graphql.schema.GraphQLSchema;
import graphql.schema.idl.RuntimeWiring;
import graphql.schema.idl.SchemaGenerator;
import graphql.schema.idl.SchemaParser;
import graphql.schema.idl.TypeDefinitionRegistry;
import graphql.util.TraversalControl;
import graphql.util.TraverserContext;

/**
 * The GraphQL engine of the W&B protocol: graphql-java executing documents against the checked-in schema
 * ({@code openapi/wandb.graphql}, on the class path as {@code META-INF/resources/openapi/wandb.graphql}) with the
 * fetchers of {@link WandbFetchers}. A domain error of a fetcher becomes a GraphQL error carrying its HTTP status in
 * {@code extensions.status}; anything else a fetcher throws is the server's fault (500).
 */
@ApplicationScoped
public class WandbGraphql {

    private static final Logger LOG = Logger.getLogger(WandbGraphql.class);

    static final String SCHEMA = "META-INF/resources/openapi/wandb.graphql";

    @Inject
    WandbFetchers fetchers;

    @Inject
    WandbArtifactFetchers artifactFetchers;

    @Inject
    WandbRunFiles runFiles;

    @Inject
    WandbRunLists runLists;

    @Inject
    WandbArtifactLists artifactLists;

    @Inject
    WandbArtifactDeletes artifactDeletes;

    @Inject
    WandbLineage lineage;

    @Inject
    WandbRunStops runStops;

    @Inject
    WandbAutomations automations;

    @Inject
    WandbIntegrations integrations;

    @Inject
    WandbProjects projects;

    @Inject
    WandbCollectionTags collectionTags;

    private GraphQL engine;

    @PostConstruct
    void build() {
        TypeDefinitionRegistry types = new SchemaParser().parse(schemaText());
        RuntimeWiring.Builder wiring = RuntimeWiring.newRuntimeWiring()
                .scalar(string("JSONString", "A JSON value encoded as a JSON string"))
                .scalar(string("DateTime", "An ISO-8601 date and time"))
                .scalar(GraphQLScalarType.newScalar().name("JSON").description("An arbitrary JSON value")
                        .coercing(new JsonCoercing()).build())
                .scalar(GraphQLScalarType.newScalar().name("Int64").description("A 64-bit integer")
                        .coercing(new Int64Coercing()).build());
        // each part of the door adds the fields it answers; a type's fields may come from several parts
        for (UnaryOperator<RuntimeWiring.Builder> part : List.<UnaryOperator<RuntimeWiring.Builder>> of(fetchers::wire,
                artifactFetchers::wire, runFiles::wire, runLists::wire, artifactLists::wire, artifactDeletes::wire,
                lineage::wire, runStops::wire, automations::wire, integrations::wire, projects::wire,
                collectionTags::wire)) {
            wiring = part.apply(wiring);
        }
        GraphQLSchema schema = new SchemaGenerator().makeExecutableSchema(types, wiring.build());
        engine = GraphQL.newGraphQL(schema).defaultDataFetcherExceptionHandler(new DomainErrors())
                .preparsedDocumentProvider(new StorableLiterals()).build();
    }

    /** Executes a document; {@code baseUrl} (ending in {@code /}) is where the URLs handed to the client point. */
    ExecutionResult execute(String document, String operationName, Map<String, Object> variables, String baseUrl) {
        return engine.execute(ExecutionInput.newExecutionInput().query(document).operationName(operationName)
                .graphQLContext(Map.of(WandbArtifactFetchers.BASE_URL, baseUrl))
                .variables(variables == null ? Map.of() : variables).build());
    }

    static String schemaText() {
        try (InputStream in = Thread.currentThread().getContextClassLoader().getResourceAsStream(SCHEMA)) {
            if (in == null) {
                throw new IllegalStateException(SCHEMA + " is not on the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static GraphQLScalarType string(String name, String description) {
        return GraphQLScalarType.newScalar().name(name).description(description).coercing(new GraphqlStringCoercing())
                .build();
    }

    /** A 64-bit integer, as a JSON number (sizes of files above 2 GiB do not fit GraphQL's Int). */
    static final class Int64Coercing implements Coercing<Long, Long> {

        @Override
        public Long serialize(Object value, GraphQLContext context, Locale locale) {
            if (value instanceof Number number) {
                return number.longValue();
            }
            throw new graphql.schema.CoercingSerializeException("Not a 64-bit integer: " + value);
        }

        @Override
        public Long parseValue(Object input, GraphQLContext context, Locale locale) {
            if (input instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue())) {
                return number.longValue();
            }
            throw new graphql.schema.CoercingParseValueException("Must be a 64-bit integer");
        }

        @Override
        public Long parseLiteral(Value<?> input, CoercedVariables variables, GraphQLContext context, Locale locale) {
            if (input instanceof IntValue number) {
                try {
                    return number.getValue().longValueExact();
                } catch (ArithmeticException e) {
                    // answered below
                }
            }
            throw new CoercingParseLiteralException("Must be a 64-bit integer");
        }
    }

    /** Any JSON value, passed through as the engine holds it (maps, lists, strings, numbers, booleans). */
    static final class JsonCoercing implements Coercing<Object, Object> {

        @Override
        public Object serialize(Object value, GraphQLContext context, Locale locale) {
            return value;
        }

        @Override
        public Object parseValue(Object input, GraphQLContext context, Locale locale) {
            return input;
        }

        @Override
        public Object parseLiteral(Value<?> input, CoercedVariables variables, GraphQLContext context, Locale locale) {
            if (input instanceof StringValue text) {
                return text.getValue();
            }
            if (input instanceof IntValue number) {
                return number.getValue();
            }
            if (input instanceof FloatValue number) {
                return number.getValue();
            }
            if (input instanceof BooleanValue flag) {
                return flag.isValue();
            }
            throw new CoercingParseLiteralException("JSON literals must be strings, numbers or booleans");
        }
    }

    /**
     * Refuses a document whose string literals hold text the database cannot store (a NUL character, an unpaired
     * surrogate: {@link StorableText}), wherever they are (arguments, input objects, lists), before it runs: each is a
     * validation error at the literal (the HTTP status 400, nothing executed). Variables are JSON of the request body,
     * refused by its mapper. Documents are not cached (as before: clients send few, and they are small).
     */
    static final class StorableLiterals implements PreparsedDocumentProvider {

        @Override
        public CompletableFuture<PreparsedDocumentEntry> getDocumentAsync(ExecutionInput input,
                Function<ExecutionInput, PreparsedDocumentEntry> parseAndValidate) {
            PreparsedDocumentEntry entry = parseAndValidate.apply(input);
            if (entry.hasErrors() || entry.getDocument() == null) {
                return CompletableFuture.completedFuture(entry);
            }
            List<GraphQLError> errors = new ArrayList<>();
            new NodeTraverser().depthFirst(new NodeVisitorStub() {
                @Override
                public TraversalControl visitStringValue(StringValue node, TraverserContext<Node> context) {
                    StorableText.Problem problem = StorableText.problem(node.getValue());
                    if (problem != null) {
                        errors.add(GraphqlErrorBuilder.newError().message(problem.message())
                                .location(node.getSourceLocation()).errorType(ErrorType.ValidationError)
                                .extensions(Map.of("status", 422, "code", problem.type())).build());
                    }
                    return TraversalControl.CONTINUE;
                }
            }, entry.getDocument());
            return CompletableFuture.completedFuture(errors.isEmpty() ? entry : new PreparsedDocumentEntry(errors));
        }
    }

    /** A fetcher's domain error as a GraphQL error with its message and HTTP status; other failures stay unexpected. */
    static final class DomainErrors implements DataFetcherExceptionHandler {

        @Override
        public CompletableFuture<DataFetcherExceptionHandlerResult> handleException(
                DataFetcherExceptionHandlerParameters params) {
            Throwable e = params.getException();
            if (e instanceof java.util.concurrent.CompletionException && e.getCause() != null) {
                e = e.getCause();
            }
            GraphQLError error;
            ApiException full = StorageFull.refusal(e, "GraphQL field " + params.getPath());
            if (full != null) {
                e = full;
            }
            if (e instanceof ApiException api) {
                error = GraphqlErrorBuilder.newError(params.getDataFetchingEnvironment()).message(api.getMessage())
                        .extensions(Map.of("status", ErrorResponses.status(api.kind()), "code", api.kind().name()))
                        .build();
            } else {
                LOG.error("GraphQL field " + params.getPath() + " failed", e);
                error = GraphqlErrorBuilder.newError(params.getDataFetchingEnvironment()).message("Internal error")
                        .extensions(Map.of("status", 500, "code", "INTERNAL")).build();
            }
            return CompletableFuture
                    .completedFuture(DataFetcherExceptionHandlerResult.newResult().errors(List.of(error)).build());
        }
    }
}

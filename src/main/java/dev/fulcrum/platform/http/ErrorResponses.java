package dev.fulcrum.platform.http;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;
import org.jboss.resteasy.reactive.server.SimpleResourceInfo;
import org.jboss.resteasy.reactive.server.core.multipart.MultipartParser;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;

import io.quarkus.hibernate.validator.runtime.jaxrs.ResteasyReactiveViolationException;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.errors.OpenAiError;
import dev.fulcrum.platform.errors.StorageFull;
import dev.fulcrum.platform.json.StorableText;

/**
 * The one place that turns exceptions into responses. Each interface answers errors in the shape its clients expect:
 * the datasets and training APIs as FastAPI does ({@code {"detail": ...}}), the inference API as OpenAI does
 * ({@code {"error": {...}}}), the management API as RFC 9457 problem details. Stack traces never reach a client.
 */
public class ErrorResponses {

    private static final Logger LOG = Logger.getLogger(ErrorResponses.class);
    private static final MediaType PROBLEM_JSON = MediaType.valueOf("application/problem+json");

    @Inject
    Instance<ErrorPages> pages;

    @ServerExceptionMapper
    public Response apiException(ApiException e, SimpleResourceInfo resource, UriInfo uri) {
        return answer(resource, uri, Reply.of(e));
    }

    @ServerExceptionMapper
    public Response unreadableJson(JsonProcessingException e, SimpleResourceInfo resource, UriInfo uri) {
        return answer(resource, uri, Reply.of(ApiException.invalid(violation(e))));
    }

    /** More specific than the built-in mapper of RESTEasy's Jackson support, which answers a bare 400. */
    @ServerExceptionMapper
    public Response mismatchedJson(MismatchedInputException e, SimpleResourceInfo resource, UriInfo uri) {
        return unreadableJson(e, resource, uri);
    }

    /**
     * A request that breaks a constraint of the contract (a pattern, a length, a bound, a required field), as the
     * generated interfaces carry them, in the shape of the interface that was called: 422 with the field's location,
     * except on the inference API, which answers 400 as OpenAI does. A broken constraint of a return value is the
     * server's fault.
     */
    @ServerExceptionMapper
    public Response constraintViolation(ConstraintViolationException e, SimpleResourceInfo resource, UriInfo uri,
            Request request) {
        ApiException refused = pageDoor(resource) != null ? refusal(e) : null;
        if (refused != null) {
            return answer(resource, uri, Reply.of(refused));
        }
        Response invalid = invalid(e, resource, rawPath(uri));
        return invalid != null ? invalid : unexpected(e, resource, uri, request);
    }

    /** The answer to broken constraints of a request's values; null when one concerns a return value. */
    static Response invalid(ConstraintViolationException e, SimpleResourceInfo resource, String path) {
        ErrorShapes.Operation api = ErrorShapes.at(path);
        List<Violation> violations = ContractViolations.of(e, resource);
        if (violations.isEmpty()) {
            return null;
        }
        boolean openAi = ErrorShapes.dialect(api, path) == ErrorShapes.Dialect.OPENAI;
        return render(api, path,
                Reply.of(openAi ? ApiException.badRequest(violations) : ApiException.invalid(violations)));
    }

    /**
     * The refusal of broken constraints of an operation called in process (the console calls the API's operations as
     * beans), as the API would answer it; null when one concerns a return value (the server's fault).
     */
    public static ApiException refusal(ConstraintViolationException e) {
        List<Violation> violations = ContractViolations.of(e, null);
        return violations.isEmpty() ? null : ApiException.invalid(violations);
    }

    /** More specific than the mapper of Quarkus' validation support, which answers in a shape of its own. */
    @ServerExceptionMapper
    public Response resteasyViolation(ResteasyReactiveViolationException e, SimpleResourceInfo resource, UriInfo uri,
            Request request) {
        return constraintViolation(e, resource, uri, request);
    }

    @ServerExceptionMapper
    public Response invalidParam(NumericParams.InvalidParam e, SimpleResourceInfo resource, UriInfo uri) {
        return answer(resource, uri,
                Reply.of(ApiException.invalid(e.violation(uri.getPathParameters(), uri.getQueryParameters()))));
    }

    @ServerExceptionMapper
    public Response webApplicationException(WebApplicationException e, SimpleResourceInfo resource, UriInfo uri,
            Request request) {
        Throwable cause = e.getCause();
        if (cause instanceof JsonProcessingException json) {
            return unreadableJson(json, resource, uri);
        }
        int status = e.getResponse().getStatus();
        String message = switch (status) {
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 406 -> "Not Acceptable";
            case 413 -> "Request body too large";
            case 415 -> unsupportedMediaType(ErrorShapes.consumes(request.getMethod(), rawPath(uri)));
            default -> e.getResponse().getStatusInfo().getReasonPhrase();
        };
        Response response = answer(resource, uri, new Reply(status, message, List.of()));
        if (status == 405 && e.getResponse().getHeaderString(HttpHeaders.ALLOW) != null) {
            return Response.fromResponse(response)
                    .header(HttpHeaders.ALLOW, e.getResponse().getHeaderString(HttpHeaders.ALLOW)).build();
        }
        return response;
    }

    /** Names the media types the operation reads (JSON, or multipart/form-data for uploads). */
    private static String unsupportedMediaType(List<String> consumes) {
        return consumes.isEmpty() ? "Unsupported Media Type"
                : "Unsupported Media Type: send " + String.join(" or ", consumes);
    }

    /** A multipart body the parser cannot read (a part header without a colon, a line break in a file name, ...). */
    @ServerExceptionMapper
    public Response malformedMultipart(MultipartParser.MalformedMessageException e, SimpleResourceInfo resource,
            UriInfo uri) {
        return answer(resource, uri, Reply.of(ApiException.invalid(MALFORMED_MULTIPART)));
    }

    /**
     * The multipart parser reports a body that ends before its closing boundary (cut off, a wrong boundary, garbage, no
     * body at all) as an I/O error; other I/O errors are the server's. RESTEasy's parser throws a plain
     * {@link IOException} for it (no subtype to catch), so its message is the only way to tell it apart.
     */
    @ServerExceptionMapper
    public Response io(IOException e, SimpleResourceInfo resource, UriInfo uri, HttpHeaders headers, Request request) {
        MediaType type = headers.getMediaType();
        if (type != null && type.isCompatible(MediaType.MULTIPART_FORM_DATA_TYPE) && e.getMessage() != null
                && e.getMessage().startsWith("Connection terminated parsing multipart")) {
            return answer(resource, uri, Reply.of(ApiException.invalid(MALFORMED_MULTIPART)));
        }
        return unexpected(e, resource, uri, request);
    }

    private static final Violation MALFORMED_MULTIPART = Violation.of(
            "The multipart body is malformed: each part needs a boundary line, header lines of the form 'Name: value' "
                    + "and the body must end with the closing boundary given in the Content-Type",
            "multipart_invalid", "body");

    /**
     * Every other failure is the server's (a 500, logged with its stack trace), except a write the server has no room
     * for (a full disk, a full database): a 507 that says so ({@link StorageFull}).
     */
    @ServerExceptionMapper
    public Response unexpected(Exception e, SimpleResourceInfo resource, UriInfo uri, Request request) {
        ApiException full = StorageFull.refusal(e, request.getMethod() + " " + uri.getPath());
        if (full != null) {
            return answer(resource, uri, Reply.of(full));
        }
        LOG.error("Unexpected error on " + uri.getPath(), e);
        return answer(resource, uri, new Reply(500, "Internal server error", List.of()));
    }

    /** The request's path as sent: a path parameter holding an encoded '/' stays one segment of its template. */
    private static String rawPath(UriInfo uri) {
        String raw = uri.getRequestUri().getRawPath();
        return raw == null ? uri.getPath() : raw;
    }

    /** The door of pages (the console) the matched resource belongs to, or null for an API's resource. */
    private ErrorPages pageDoor(SimpleResourceInfo resource) {
        Class<?> matched = resource == null ? null : resource.getResourceClass();
        if (matched != null) {
            for (ErrorPages door : pages) {
                if (door.shows(matched)) {
                    return door;
                }
            }
        }
        return null;
    }

    /**
     * The answer to a refusal: a page where the matched resource belongs to a door of pages, otherwise the error in the
     * shape of the interface.
     */
    private Response answer(SimpleResourceInfo resource, UriInfo uri, Reply reply) {
        ErrorPages door = pageDoor(resource);
        if (door == null) {
            return render(ErrorShapes.at(rawPath(uri)), rawPath(uri), reply);
        }
        Violation first = reply.violations().isEmpty() ? null : reply.violations().get(0);
        String where = first == null || first.field().isEmpty() ? "" : first.field() + ": ";
        return door.page(reply.status(), where + reply.message(), uri.getPath());
    }

    /**
     * The response for an error of {@code api}; {@code path} chooses the shape only when no document has the path (an
     * unknown path's 404).
     */
    static Response render(ErrorShapes.Operation api, String path, Reply e) {
        Response.ResponseBuilder response = Response.status(e.status());
        if (e.status() == 401) {
            response.header(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"fulcrum\"");
            if (ErrorShapes.acceptsBasic(api, path)) {
                response.header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"fulcrum\", charset=\"UTF-8\"");
            }
        }
        Body body = body(api, path, e);
        return response.type(body.type()).entity(body.entity()).build();
    }

    /**
     * The HTTP status of a domain error: the one table from what went wrong to how HTTP says it. Every door (the JAX-RS
     * resources, the console's pages, the chat route) answers through it.
     */
    public static int status(ApiException.Kind kind) {
        return switch (kind) {
            case UNAUTHENTICATED -> 401;
            case FORBIDDEN -> 403;
            case NOT_FOUND -> 404;
            case CONFLICT -> 409;
            case TOO_LARGE -> 413;
            case INVALID -> 422;
            case MALFORMED -> 400;
            case UNAVAILABLE -> 503;
            case AT_CAPACITY -> 429;
            case QUOTA_EXCEEDED -> 402;
            case UPSTREAM_FAILED -> 502;
            case UPSTREAM_TIMEOUT -> 504;
            case FAILED -> 500;
            case STORAGE_FULL -> 507;
        };
    }

    /** An error as this edge answers it: the status, the message shown, and the violations of invalid input. */
    record Reply(int status, String message, List<Violation> violations) {

        static Reply of(ApiException e) {
            return new Reply(ErrorResponses.status(e.kind()), e.getMessage(), e.violations());
        }
    }

    /** An error's body in the shape of its interface, and its media type. */
    record Body(MediaType type, Map<String, Object> entity) {
    }

    static Body body(ErrorShapes.Operation api, String path, Reply e) {
        return switch (ErrorShapes.dialect(api, path)) {
            case DETAIL -> new Body(MediaType.APPLICATION_JSON_TYPE, detail(e));
            case OPENAI -> new Body(MediaType.APPLICATION_JSON_TYPE, openAi(e));
            case PROBLEM -> new Body(PROBLEM_JSON, problem(e));
            case GRAPHQL -> new Body(MediaType.APPLICATION_JSON_TYPE, graphql(e));
        };
    }

    private static Map<String, Object> detail(Reply e) {
        if (e.violations().isEmpty()) {
            return Map.of("detail", e.message());
        }
        return Map.of("detail", e.violations());
    }

    /** GraphQL's errors; each violation of invalid input is one error naming its field. */
    private static Map<String, Object> graphql(Reply e) {
        List<Map<String, Object>> errors = new ArrayList<>();
        if (e.violations().isEmpty()) {
            errors.add(Map.of("message", e.message()));
        }
        for (Violation v : e.violations()) {
            errors.add(Map.of("message", v.field() + ": " + v.msg()));
        }
        return Map.of("errors", errors);
    }

    private static Map<String, Object> openAi(Reply e) {
        Violation first = e.violations().isEmpty() ? null : e.violations().get(0);
        return OpenAiError.body(e.status(), e.message(), first == null ? null : first.field(),
                first == null ? null : first.type());
    }

    private static Map<String, Object> problem(Reply e) {
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title", reasonPhrase(e.status()));
        problem.put("status", e.status());
        problem.put("detail", e.message());
        if (!e.violations().isEmpty()) {
            List<Map<String, String>> errors = new ArrayList<>();
            for (Violation v : e.violations()) {
                errors.add(Map.of("field", v.field(), "message", v.msg()));
            }
            problem.put("errors", errors);
        }
        return problem;
    }

    /** Reason phrases of RFC 9110 where Jakarta REST's {@link Response.Status} has an older one or none. */
    private static final Map<Integer, String> REASONS = Map.of(413, "Content Too Large", 414, "URI Too Long", 416,
            "Range Not Satisfiable", 422, "Unprocessable Content", 423, "Locked", 507, "Insufficient Storage");

    static String reasonPhrase(int status) {
        Response.Status known = Response.Status.fromStatusCode(status);
        return REASONS.getOrDefault(status,
                known != null ? known.getReasonPhrase() : status >= 500 ? "Server Error" : "Client Error");
    }

    /** Where in the body Jackson gave up, as a FastAPI location. */
    static Violation violation(JsonProcessingException e) {
        List<Object> loc = new ArrayList<>();
        loc.add("body");
        JsonProcessingException parse = parseError(e);
        if (parse instanceof StreamConstraintsException) {
            JsonLocation where = parse.getLocation();
            loc.add(where == null ? 0 : (int) Math.max(0, where.getCharOffset()));
            return new Violation(loc, "JSON decode error: " + constraint(parse.getOriginalMessage()), "json_invalid");
        }
        if (parse != null) {
            JsonLocation where = parse.getLocation();
            loc.add(where == null ? 0 : (int) Math.max(0, where.getCharOffset()));
            return new Violation(loc, "JSON decode error: " + parse.getOriginalMessage(), "json_invalid");
        }
        JsonMappingException mapping = (JsonMappingException) e;
        for (JsonMappingException.Reference ref : mapping.getPath()) {
            loc.add(ref.getFieldName() != null ? ref.getFieldName() : (Object) ref.getIndex());
        }
        if (mapping instanceof StorableText.Refused refused) {
            return new Violation(loc, refused.problem().message(), refused.problem().type());
        }
        Matcher missing = MISSING_PROPERTY.matcher(String.valueOf(mapping.getOriginalMessage()));
        if (missing.find()) {
            if (!missing.group(1).equals(loc.get(loc.size() - 1))) {
                loc.add(missing.group(1));
            }
            return new Violation(loc, "Field required", "missing");
        }
        if (mapping instanceof ValueInstantiationException && mapping.getCause() instanceof IllegalArgumentException) {
            // a generated enum's fromValue refusing the value: its values, in pydantic's words
            Class<?> type = ((ValueInstantiationException) mapping).getType().getRawClass();
            return new Violation(loc,
                    type.isEnum() ? enumMessage(type.getEnumConstants()) : mapping.getCause().getMessage(), "enum");
        }
        if (mapping instanceof InvalidFormatException || mapping instanceof MismatchedInputException) {
            Expected expected = expectation(((MismatchedInputException) mapping).getTargetType());
            return new Violation(loc, expected.msg(), expected.type());
        }
        return new Violation(loc, "Invalid value", "value_error");
    }

    /** {@code Input should be 'a', 'b' or 'c'}: the JSON values of a generated enum. */
    static String enumMessage(Object[] values) {
        List<String> quoted = java.util.Arrays.stream(values).map(v -> "'" + v + "'").toList();
        return "Input should be " + (quoted.size() == 1 ? quoted.get(0)
                : String.join(", ", quoted.subList(0, quoted.size() - 1)) + " or " + quoted.get(quoted.size() - 1));
    }

    private static final Pattern MISSING_PROPERTY = Pattern.compile("Missing required creator property '([^']+)'");

    /** A bound of {@link dev.fulcrum.platform.json.JsonInput} in words, without Jackson's pointer to its own API. */
    private static String constraint(String message) {
        int from = message == null ? -1 : message.indexOf(", from `");
        return from < 0 ? String.valueOf(message) : message.substring(0, from) + ")";
    }

    /**
     * The syntax error, or the exceeded bound of {@link dev.fulcrum.platform.json.JsonInput}, behind a Jackson failure,
     * if it is one.
     */
    private static JsonProcessingException parseError(JsonProcessingException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JsonParseException || t instanceof StreamConstraintsException) {
                return (JsonProcessingException) t;
            }
        }
        return e instanceof JsonMappingException ? null : e;
    }

    /** What a JSON value should have been, in pydantic's words and type. */
    private record Expected(String msg, String type) {
        static final Expected DICT = new Expected("Input should be a valid dictionary", "dict_type");
        static final Expected LIST = new Expected("Input should be a valid list", "list_type");
        static final Expected STRING = new Expected("Input should be a valid string", "string_type");
        static final Expected INTEGER = new Expected("Input should be a valid integer", "int_type");
        static final Expected BOOLEAN = new Expected("Input should be a valid boolean", "bool_type");
        static final Expected NUMBER = new Expected("Input should be a valid number", "float_type");
        static final Expected DATETIME = new Expected(
                "Input should be a valid datetime (RFC 3339, with an offset of at most 18 hours)", "datetime_parsing");
        static final Expected ANY = new Expected("Invalid value", "value_error");
    }

    private static Expected expectation(Class<?> target) {
        if (target == null) {
            return Expected.ANY;
        }
        if (Map.class.isAssignableFrom(target) || target.getName().endsWith("ObjectNode")) {
            return Expected.DICT;
        }
        if (List.class.isAssignableFrom(target) || target.isArray()) {
            return Expected.LIST;
        }
        if (target == String.class || target.isEnum()) {
            return Expected.STRING;
        }
        if (target == Integer.class || target == Long.class || target == int.class || target == long.class) {
            return Expected.INTEGER;
        }
        if (target == Boolean.class || target == boolean.class) {
            return Expected.BOOLEAN;
        }
        if (Number.class.isAssignableFrom(target) || target.isPrimitive()) {
            return Expected.NUMBER;
        }
        if (java.time.temporal.Temporal.class.isAssignableFrom(target)) {
            // java.time reads RFC 3339 but for offsets beyond +/-18:00, which it cannot hold
            return Expected.DATETIME;
        }
        return Expected.DICT;
    }
}

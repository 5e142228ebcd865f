package dev.fulcrum.platform;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;
import org.jboss.resteasy.reactive.server.core.multipart.MultipartParser;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;

import dev.fulcrum.platform.ApiException.Violation;

/**
 * The one place that turns exceptions into responses. Each interface answers errors in the shape its clients expect:
 * the datasets and training APIs as FastAPI does ({@code {"detail": ...}}), the inference API as OpenAI does
 * ({@code {"error": {...}}}), the management API as RFC 9457 problem details. Stack traces never reach a client.
 */
public class ErrorResponses {

    private static final Logger LOG = Logger.getLogger(ErrorResponses.class);
    private static final MediaType PROBLEM_JSON = MediaType.valueOf("application/problem+json");

    enum Dialect {
        DETAIL, OPENAI, PROBLEM;

        static Dialect of(String path) {
            String p = path.startsWith("/") ? path : "/" + path;
            if (p.startsWith("/v2/") || p.startsWith("/table/") || p.startsWith("/v1/preview/")
                    || p.startsWith("/v1/health") || p.startsWith("/v1/system-check")) {
                return DETAIL;
            }
            if (p.startsWith("/v1/")) {
                return OPENAI;
            }
            return PROBLEM;
        }

        /** HTTP Basic is offered on the datasets API only, as its clients use it. */
        static boolean acceptsBasic(String path) {
            String p = path.startsWith("/") ? path : "/" + path;
            return p.startsWith("/v2/") || p.startsWith("/table/");
        }
    }

    @ServerExceptionMapper
    public Response apiException(ApiException e, UriInfo uri) {
        return render(uri.getPath(), e);
    }

    @ServerExceptionMapper
    public Response unreadableJson(JsonProcessingException e, UriInfo uri) {
        return render(uri.getPath(), ApiException.invalid(violation(e)));
    }

    /** More specific than the built-in mapper of RESTEasy's Jackson support, which answers a bare 400. */
    @ServerExceptionMapper
    public Response mismatchedJson(MismatchedInputException e, UriInfo uri) {
        return unreadableJson(e, uri);
    }

    @ServerExceptionMapper
    public Response invalidParam(NumericParams.InvalidParam e, UriInfo uri) {
        return render(uri.getPath(),
                ApiException.invalid(e.violation(uri.getPathParameters(), uri.getQueryParameters())));
    }

    @ServerExceptionMapper
    public Response webApplicationException(WebApplicationException e, UriInfo uri) {
        Throwable cause = e.getCause();
        if (cause instanceof JsonProcessingException json) {
            return unreadableJson(json, uri);
        }
        int status = e.getResponse().getStatus();
        String message = switch (status) {
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 406 -> "Not Acceptable";
            case 413 -> "Request body too large";
            case 415 -> "Unsupported Media Type: send application/json";
            default -> e.getResponse().getStatusInfo().getReasonPhrase();
        };
        Response response = render(uri.getPath(), new ApiException(status, message));
        if (status == 405 && e.getResponse().getHeaderString(HttpHeaders.ALLOW) != null) {
            return Response.fromResponse(response)
                    .header(HttpHeaders.ALLOW, e.getResponse().getHeaderString(HttpHeaders.ALLOW)).build();
        }
        return response;
    }

    /** A multipart body the parser cannot read (a part header without a colon, a line break in a file name, ...). */
    @ServerExceptionMapper
    public Response malformedMultipart(MultipartParser.MalformedMessageException e, UriInfo uri) {
        return render(uri.getPath(), ApiException.invalid(MALFORMED_MULTIPART));
    }

    /**
     * The multipart parser reports a body that ends before its closing boundary (cut off, a wrong boundary, garbage, no
     * body at all) as an I/O error; other I/O errors are the server's.
     */
    @ServerExceptionMapper
    public Response io(IOException e, UriInfo uri, HttpHeaders headers) {
        MediaType type = headers.getMediaType();
        if (type != null && type.isCompatible(MediaType.MULTIPART_FORM_DATA_TYPE) && e.getMessage() != null
                && e.getMessage().startsWith("Connection terminated parsing multipart")) {
            return render(uri.getPath(), ApiException.invalid(MALFORMED_MULTIPART));
        }
        return unexpected(e, uri);
    }

    private static final Violation MALFORMED_MULTIPART = Violation.of(
            "The multipart body is malformed: each part needs a boundary line, header lines of the form 'Name: value' "
                    + "and the body must end with the closing boundary given in the Content-Type",
            "multipart_invalid", "body");

    @ServerExceptionMapper
    public Response unexpected(Exception e, UriInfo uri) {
        LOG.error("Unexpected error on " + uri.getPath(), e);
        return render(uri.getPath(), new ApiException(500, "Internal server error"));
    }

    static Response render(String path, ApiException e) {
        Response.ResponseBuilder response = Response.status(e.status());
        if (e.status() == 401) {
            response.header(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"fulcrum\"");
            if (Dialect.acceptsBasic(path)) {
                response.header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"fulcrum\", charset=\"UTF-8\"");
            }
        }
        Body body = body(path, e);
        return response.type(body.type()).entity(body.entity()).build();
    }

    /** An error's body in the shape of the interface at {@code path}, and its media type. */
    record Body(MediaType type, Map<String, Object> entity) {
    }

    static Body body(String path, ApiException e) {
        return switch (Dialect.of(path)) {
            case DETAIL -> new Body(MediaType.APPLICATION_JSON_TYPE, detail(e));
            case OPENAI -> new Body(MediaType.APPLICATION_JSON_TYPE, openAi(e));
            case PROBLEM -> new Body(PROBLEM_JSON, problem(e));
        };
    }

    private static Map<String, Object> detail(ApiException e) {
        if (e.violations().isEmpty()) {
            return Map.of("detail", e.getMessage());
        }
        return Map.of("detail", e.violations());
    }

    private static Map<String, Object> openAi(ApiException e) {
        Map<String, Object> error = new LinkedHashMap<>();
        // the OpenAI SDKs' clients expect this message for every key problem
        error.put("message", e.status() == 401 ? "Authentication failed" : e.getMessage());
        error.put("type", switch (e.status()) {
            case 401 -> "authentication_error";
            case 403 -> "permission_error";
            case 404 -> "not_found_error";
            case 429 -> "rate_limit_error";
            case 500, 503 -> "server_error";
            default -> "invalid_request_error";
        });
        error.put("param", e.violations().isEmpty() ? null : e.violations().get(0).field());
        error.put("code",
                e.status() == 401 ? "invalid_api_key" : e.violations().isEmpty() ? null : e.violations().get(0).type());
        return Map.of("error", error);
    }

    private static Map<String, Object> problem(ApiException e) {
        Map<String, Object> problem = new LinkedHashMap<>();
        problem.put("type", "about:blank");
        problem.put("title",
                Response.Status.fromStatusCode(e.status()) != null
                        ? Response.Status.fromStatusCode(e.status()).getReasonPhrase()
                        : "Unprocessable Content");
        problem.put("status", e.status());
        problem.put("detail", e.getMessage());
        if (!e.violations().isEmpty()) {
            List<Map<String, String>> errors = new ArrayList<>();
            for (Violation v : e.violations()) {
                errors.add(Map.of("field", v.field(), "message", v.msg()));
            }
            problem.put("errors", errors);
        }
        return problem;
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
        if (mapping instanceof NulCharacters.Refused) {
            return new Violation(loc, NulCharacters.MESSAGE, NulCharacters.TYPE);
        }
        Matcher missing = MISSING_PROPERTY.matcher(String.valueOf(mapping.getOriginalMessage()));
        if (missing.find()) {
            if (!missing.group(1).equals(loc.get(loc.size() - 1))) {
                loc.add(missing.group(1));
            }
            return new Violation(loc, "Field required", "missing");
        }
        if (mapping instanceof ValueInstantiationException && mapping.getCause() instanceof IllegalArgumentException) {
            // a generated enum's fromValue refusing the value: "Unexpected value 'x'"
            return new Violation(loc, mapping.getCause().getMessage(), "enum");
        }
        if (mapping instanceof InvalidFormatException || mapping instanceof MismatchedInputException) {
            Class<?> target = ((MismatchedInputException) mapping).getTargetType();
            return new Violation(loc, expectation(target), typeName(target));
        }
        return new Violation(loc, "Invalid value", "value_error");
    }

    private static final Pattern MISSING_PROPERTY = Pattern.compile("Missing required creator property '([^']+)'");

    /** A bound of {@link JsonInput} in words, without Jackson's pointer to its own API. */
    private static String constraint(String message) {
        int from = message == null ? -1 : message.indexOf(", from `");
        return from < 0 ? String.valueOf(message) : message.substring(0, from) + ")";
    }

    /** The syntax error, or the exceeded bound of {@link JsonInput}, behind a Jackson failure, if it is one. */
    private static JsonProcessingException parseError(JsonProcessingException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JsonParseException || t instanceof StreamConstraintsException) {
                return (JsonProcessingException) t;
            }
        }
        return e instanceof JsonMappingException ? null : e;
    }

    private static String expectation(Class<?> target) {
        if (target == null) {
            return "Invalid value";
        }
        if (Map.class.isAssignableFrom(target) || target.getName().endsWith("ObjectNode")) {
            return "Input should be a valid dictionary";
        }
        if (List.class.isAssignableFrom(target) || target.isArray()) {
            return "Input should be a valid list";
        }
        if (target == String.class) {
            return "Input should be a valid string";
        }
        if (target == Integer.class || target == Long.class || target == int.class || target == long.class) {
            return "Input should be a valid integer";
        }
        if (target == Boolean.class || target == boolean.class) {
            return "Input should be a valid boolean";
        }
        if (Number.class.isAssignableFrom(target) || target.isPrimitive()) {
            return "Input should be a valid number";
        }
        return "Input should be a valid dictionary";
    }

    private static String typeName(Class<?> target) {
        String msg = expectation(target);
        if (msg.contains("dictionary")) {
            return "dict_type";
        }
        if (msg.contains("list")) {
            return "list_type";
        }
        if (msg.contains("string")) {
            return "string_type";
        }
        if (msg.contains("integer")) {
            return "int_type";
        }
        if (msg.contains("boolean")) {
            return "bool_type";
        }
        return msg.contains("number") ? "float_type" : "value_error";
    }
}

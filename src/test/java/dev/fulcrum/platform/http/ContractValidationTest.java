package dev.fulcrum.platform.http;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.everyItem;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.Validation;
import jakarta.validation.Validator;
import jakarta.ws.rs.core.Response;

import org.hibernate.validator.HibernateValidator;
import org.hibernate.validator.messageinterpolation.ParameterMessageInterpolator;
import org.jboss.resteasy.reactive.server.SimpleResourceInfo;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;

import dev.fulcrum.inference.api.InferenceChatApi;
import dev.fulcrum.inference.api.model.InferenceChatRequest;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.LabTest;

/**
 * The constraints of the contract (patterns, lengths, bounds, required values) are checked once, from the generated
 * interfaces, and a broken one is answered in the shape of the interface that was called, located at the parameter or
 * property that broke it.
 */
@QuarkusTest
class ContractValidationTest extends LabTest {

    private static final String NAME_RULE = "Must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit";

    @Test
    void theDatasetsApiLocatesAPathParameterAndABodyPropertyAsFastApiDoes() {
        given().filter(Contract.DATASETS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("rows", List.of(Map.of("a", 1)))).post("/v2/-lab/vision/datasets").then().statusCode(422)
                .contentType("application/json").body("detail", hasSize(1))
                .body("detail[0].loc", contains("path", "entity")).body("detail[0].msg", equalTo(NAME_RULE))
                .body("detail[0].type", equalTo("string_pattern_mismatch"));
        given().filter(Contract.DATASETS).auth().oauth2(member.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "n".repeat(129), "rows", List.of(Map.of("a", 1))))
                .post("/v2/" + team.name + "/vision/datasets").then().statusCode(422)
                // the name's length and its pattern (which bounds the length too) are both broken: two entries
                .body("detail.loc", everyItem(contains("body", "name")))
                .body("detail.find { it.type == 'string_too_long' }.msg", equalTo("Must be at most 128 characters"));
    }

    @Test
    void theManagementApiNamesTheFieldInAProblem() {
        given().filter(Contract.AUTOMATIONS).auth().oauth2(admin.key()).contentType(ContentType.JSON)
                .body(Map.of("name", "h".repeat(129), "url", "https://example.com/hook"))
                .post("/api/v1/teams/" + team.name + "/webhooks").then().statusCode(422)
                .contentType("application/problem+json").body("status", equalTo(422))
                .body("title", equalTo("Unprocessable Content")).body("errors.field", contains("name"))
                .body("errors[0].message", equalTo("Must be at most 128 characters"));
        given().filter(Contract.EVENTS).auth().oauth2(member.key()).queryParam("limit", 0)
                .get("/api/v1/entities/" + team.name + "/projects/vision/events").then().statusCode(422)
                .contentType("application/problem+json").body("errors.field", contains("limit"))
                .body("detail", equalTo("Must be between 1 and 1000"));
    }

    @Test
    void aMissingBodyIsAFieldRequiredAtTheBody() {
        given().filter(Contract.ACCOUNTS).auth().oauth2(admin.key()).contentType(ContentType.JSON).post("/api/v1/teams")
                .then().statusCode(422).contentType("application/problem+json")
                .body("detail", equalTo("Field required")).body("errors", hasSize(1));
    }

    /** The inference API's generated interfaces are answered as OpenAI answers a malformed request: 400, the param. */
    @Test
    void theInferenceApiAnswersAsOpenAiDoes() throws NoSuchMethodException {
        // a stand-in for a resource implementing the interface (a class would be deployed as one)
        InferenceChatApi chat = (InferenceChatApi) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] { InferenceChatApi.class }, (proxy, method, args) -> null);
        Method create = InferenceChatApi.class.getMethod("createChatCompletion", InferenceChatRequest.class,
                String.class, String.class);
        // Hibernate Validator as it is, not Quarkus' (which knows the classes of the build only)
        Validator validator = Validation.byProvider(HibernateValidator.class).configure()
                .messageInterpolator(new ParameterMessageInterpolator()).buildValidatorFactory().getValidator();
        Set<ConstraintViolation<InferenceChatApi>> violations = validator.forExecutables().validateParameters(chat,
                create, new Object[] { new InferenceChatRequest().model("m").messages(List.of()), null, null });
        assertEquals(1, violations.size(), "the empty messages break minItems");
        SimpleResourceInfo resource = new SimpleResourceInfo() {
            @Override
            public Class<?> getResourceClass() {
                return chat.getClass();
            }

            @Override
            public String getMethodName() {
                return "createChatCompletion";
            }

            @Override
            public Class<?>[] parameterTypes() {
                return create.getParameterTypes();
            }
        };
        Response response = ErrorResponses.invalid(new ConstraintViolationException(violations), resource,
                "/v1/chat/completions");
        assertEquals(400, response.getStatus());
        @SuppressWarnings("unchecked")
        Map<String, Object> error = (Map<String, Object>) ((Map<String, Object>) response.getEntity()).get("error");
        assertEquals("Must be at least 1 item", error.get("message"));
        assertEquals("invalid_request_error", error.get("type"));
        assertEquals("messages", error.get("param"));
        assertEquals("too_short", error.get("code"));
    }
}

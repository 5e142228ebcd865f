package dev.fulcrum.support;

import static io.restassured.RestAssured.given;

import java.time.Duration;
import java.util.Map;

import com.atlassian.oai.validator.restassured.OpenApiValidationFilter;

import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Fixtures.Account;

/** The Tinker API as the SDK calls it, each answer checked against {@code openapi/tinker.yaml}. */
public final class TinkerCalls {

    public static final OpenApiValidationFilter TINKER = Contract.of("tinker");

    private TinkerCalls() {
    }

    /** A request of the user's, with the SDK's key header ({@code X-API-Key: tml-...}). */
    public static RequestSpecification as(Account user) {
        return given().filter(TINKER).contentType(ContentType.JSON).header("X-API-Key", "tml-" + user.key());
    }

    /** A worker's request (its bearer token) to the Tinker worker protocol. */
    public static RequestSpecification worker(String token) {
        return given().filter(TINKER).contentType(ContentType.JSON).auth().oauth2(token);
    }

    /**
     * The future's answer once it is no longer pending: {@code retrieve_future} is asked again while it answers 408,
     * for at most a minute (the last answer then).
     */
    public static Response future(Account user, String requestId) {
        Response answer;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        do {
            answer = as(user).body(Map.of("request_id", requestId)).post("/tinker/api/v1/retrieve_future");
        } while (answer.statusCode() == 408 && System.nanoTime() < deadline);
        return answer;
    }
}

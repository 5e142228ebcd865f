package dev.fulcrum.support;

import static io.restassured.RestAssured.given;

import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

/** Requests to the management API whose responses are checked against {@code openapi/accounts.yaml}. */
public final class Management {

    public static final String PROBLEM_JSON = "application/problem+json";

    private Management() {
    }

    /** A request authenticated with this API key. */
    public static RequestSpecification as(String key) {
        return given().filter(Contract.ACCOUNTS).auth().oauth2(key).contentType(ContentType.JSON);
    }

    public static RequestSpecification as(Fixtures.Account account) {
        return as(account.key());
    }

    public static RequestSpecification asAdmin() {
        return as(EmbeddedPostgresResource.ADMIN_KEY);
    }

    /** A request without credentials. */
    public static RequestSpecification anonymous() {
        return given().filter(Contract.ACCOUNTS).contentType(ContentType.JSON);
    }
}

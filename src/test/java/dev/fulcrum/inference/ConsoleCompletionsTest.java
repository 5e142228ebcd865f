package dev.fulcrum.inference;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The console playground's completion route ({@code POST /console/playground/completions}): a signed-in session runs
 * the completion path of {@code /v1/chat/completions} as its user, only from the console's own pages (Origin, CSRF
 * token), with the API's answers; and the API itself never takes the console's cookie.
 */
@QuarkusTest
class ConsoleCompletionsTest {

    private static final Pattern CSRF = Pattern.compile("data-csrf=\"([^\"]+)\"");

    @Inject
    Fixtures fixtures;

    private Account user;
    private String cookie;
    private String csrf;

    @BeforeEach
    void signIn() {
        user = fixtures.user("player");
        cookie = given().contentType(ContentType.URLENC).formParam("api_key", user.key()).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
        String page = given().cookie(ConsoleSessions.COOKIE, cookie).get("/console/playground").then().statusCode(200)
                .body(containsString("fulcrum-tiny")).extract().asString();
        Matcher token = CSRF.matcher(page);
        assertTrue(token.find(), "the playground carries the session's CSRF token");
        csrf = token.group(1);
    }

    private static Map<String, Object> body(boolean stream) {
        Map<String, Object> body = new HashMap<>(Map.of("model", "fulcrum-tiny", "messages",
                List.of(Map.of("role", "user", "content", "Say something about the sea.")), "max_tokens", 12, "stream",
                stream));
        if (stream) {
            body.put("stream_options", Map.of("include_usage", true));
            // the untrained model samples noise: a fixed seed, so that its answer is the same several pieces each run
            body.put("seed", 7);
        }
        return body;
    }

    private RequestSpecification console() {
        return console("http://localhost:" + RestAssured.port);
    }

    private RequestSpecification console(String origin) {
        return given().log().ifValidationFails().contentType(ContentType.JSON).cookie(ConsoleSessions.COOKIE, cookie)
                .header("Origin", origin).header("X-CSRF-Token", csrf);
    }

    @Test
    void aSessionStreamsACompletionAsItsUser() {
        Response answer = console().body(body(true)).post("/console/playground/completions");
        answer.then().statusCode(200).contentType(startsWith("text/event-stream"))
                .header("X-Content-Type-Options", "nosniff")
                .header("Content-Security-Policy", containsString("default-src 'none'"));
        List<String> events = Inference.events(answer.asString());
        assertEquals("[DONE]", events.get(events.size() - 1));
        long pieces = events.stream().filter(e -> !e.equals("[DONE]")).map(JsonPath::from)
                .filter(e -> e.getString("choices[0].delta.content") != null
                        && !e.getString("choices[0].delta.content").isEmpty())
                .count();
        assertTrue(pieces > 1, "the text arrives in more than one piece: " + events);
        JsonPath usage = JsonPath.from(events.get(events.size() - 2));
        assertTrue(usage.getInt("usage.completion_tokens") > 0, events.toString());
        // counted as the session's user, for the user's own default project, like a key of theirs
        await("the completion is counted").atMost(Duration.ofSeconds(20))
                .until(() -> Inference.as(user.key()).queryParam("entity", user.name()).get("/api/v1/usage").then()
                        .statusCode(200).extract().jsonPath()
                        .getList("data.findAll { it.key == 'fulcrum-tiny' }.requests"),
                        requests -> requests.equals(List.of(1)));
    }

    @Test
    void withoutASessionIs401() {
        given().contentType(ContentType.JSON).header("X-CSRF-Token", csrf).body(body(false))
                .post("/console/playground/completions").then().statusCode(401)
                .body("error.code", equalTo("not_signed_in"));
        given().contentType(ContentType.JSON).cookie(ConsoleSessions.COOKIE, "not-a-session")
                .header("X-CSRF-Token", csrf).body(body(false)).post("/console/playground/completions").then()
                .statusCode(401);
    }

    @Test
    void aWrongOrMissingCsrfTokenIs403() {
        given().contentType(ContentType.JSON).cookie(ConsoleSessions.COOKIE, cookie).header("X-CSRF-Token", "forged")
                .body(body(false)).post("/console/playground/completions").then().statusCode(403)
                .body("error.code", equalTo("permission_denied")).body("error.message", containsString("token"));
        given().contentType(ContentType.JSON).cookie(ConsoleSessions.COOKIE, cookie).body(body(false))
                .post("/console/playground/completions").then().statusCode(403);
    }

    @Test
    void anotherOriginIs403() {
        console("https://evil.example").body(body(false)).post("/console/playground/completions").then().statusCode(403)
                .body("error.message", containsString("did not come from this console"));
    }

    @Test
    void aProjectOfATeamTheUserIsNotInIsTheApisError() {
        Account owner = fixtures.user("owner");
        PlatformEntity team = fixtures.team("closed", owner);
        String api = Inference.as(user.key()).header("Compat-Project", team.name + "/p").body(body(false))
                .post("/v1/chat/completions").then().statusCode(403).extract().path("error.message");
        console().header("Compat-Project", team.name + "/p").body(body(false)).post("/console/playground/completions")
                .then().statusCode(403).body("error.message", equalTo(api));
        // a member's session may count it there
        fixtures.member(team, user, Role.MEMBER);
        console().header("Compat-Project", team.name + "/p").body(body(false)).post("/console/playground/completions")
                .then().log().ifValidationFails().statusCode(200).body("object", equalTo("chat.completion"));
    }

    @Test
    void theApiNeverTakesTheConsoleCookie() {
        given().contentType(ContentType.JSON).cookie(ConsoleSessions.COOKIE, cookie)
                .header("Origin", "http://localhost:" + RestAssured.port).header("X-CSRF-Token", csrf).body(body(false))
                .post("/v1/chat/completions").then().statusCode(401);
    }

    @Test
    void aSignedOutSessionIsRefused() {
        given().contentType(ContentType.URLENC).cookie(ConsoleSessions.COOKIE, cookie).formParam("_csrf", csrf)
                .redirects().follow(false).post("/console/sign-out").then().statusCode(303);
        console().body(body(false)).post("/console/playground/completions").then().statusCode(401);
    }
}

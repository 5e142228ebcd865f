package dev.fulcrum.console;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.PATCH;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The console's CSRF and Origin rules hold for every state-changing route, found by reading the console's own page
 * classes: a route added tomorrow is checked without a line here. Without the session's token, with another session's
 * token, or from another origin, each is refused with 403 before its handler runs; the sign-in form (no session yet) is
 * refused only from another origin.
 */
@QuarkusTest
class ConsoleFormSafetyTest {

    private static final Pattern CSRF = Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"");
    private static final Pattern PARAMETER = Pattern.compile("\\{([^}/:]+)(:[^}]*)?}");
    private static final List<Class<?>> PAGES = List.of(AdminPages.class, ArtifactPages.class, ConsolePages.class,
            DataPages.class, PlaygroundPages.class, ProjectAutomationPages.class, RegistryArtifactPages.class,
            RegistryAutomationPages.class, RootPage.class, RunPages.class, TeamPages.class, TrainingPages.class,
            UsagePage.class);

    @Inject
    Fixtures fixtures;

    private Account admin;

    @BeforeEach
    void users() {
        admin = fixtures.user("admin");
    }

    /** Method and path of every state-changing route of the console's pages, path parameters filled in. */
    static List<String[]> unsafeRoutes() {
        List<String[]> routes = new ArrayList<>();
        for (Class<?> page : PAGES) {
            if (!page.isAnnotationPresent(AuthenticatesWithSession.class)) {
                continue;
            }
            String base = page.isAnnotationPresent(Path.class) ? page.getAnnotation(Path.class).value() : "";
            for (Method m : page.getDeclaredMethods()) {
                String method = m.isAnnotationPresent(POST.class) ? "POST"
                        : m.isAnnotationPresent(PUT.class) ? "PUT"
                                : m.isAnnotationPresent(DELETE.class) ? "DELETE"
                                        : m.isAnnotationPresent(PATCH.class) ? "PATCH" : null;
                if (method == null || m.isAnnotationPresent(SignedOut.class)) {
                    continue;
                }
                String path = base
                        + (m.isAnnotationPresent(Path.class) ? "/" + m.getAnnotation(Path.class).value() : "");
                Matcher parameter = PARAMETER.matcher(path.replaceAll("/+", "/"));
                routes.add(new String[] { method, parameter.replaceAll("1") });
            }
        }
        return routes;
    }

    private static String signIn(Account account) {
        return given().contentType(ContentType.URLENC).formParam("api_key", account.key()).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
    }

    private static String token(String cookie) {
        String page = given().cookie(ConsoleSessions.COOKIE, cookie).get("/console/account").then().statusCode(200)
                .extract().asString();
        Matcher token = CSRF.matcher(page);
        assertTrue(token.find(), "the account page carries a form with the session's token");
        return token.group(1);
    }

    private static Response send(String[] route, String cookie, String token, String origin) {
        var request = given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false)
                .contentType(ContentType.URLENC).formParam("name", "x");
        if (token != null) {
            request.formParam("_csrf", token);
        }
        if (origin != null) {
            request.header("Origin", origin);
        }
        return request.request(route[0], route[1]);
    }

    @Test
    void everyStateChangingRouteRefusesAFormWithoutTheSessionsToken() {
        List<String[]> routes = unsafeRoutes();
        assertTrue(routes.size() >= 40, "the console's forms are found: " + routes.size());
        String cookie = signIn(admin);
        String otherSessionsToken = token(signIn(admin));
        for (String[] route : routes) {
            String what = route[0] + " " + route[1];
            send(route, cookie, null, null).then().statusCode(403).body(containsString("reload the page"));
            send(route, cookie, otherSessionsToken, null).then().statusCode(403)
                    .body(containsString("reload the page"));
            send(route, cookie, token(cookie), "https://elsewhere.example").then().statusCode(403)
                    .body(containsString("did not come from this console"));
            System.out.println("refused without the token: " + what);
        }
    }

    @Test
    void aFormWithTheTokenInTheHeaderOrTheFieldReachesItsHandler() {
        String cookie = signIn(admin);
        String token = token(cookie);
        given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false).contentType(ContentType.URLENC)
                .formParam("_csrf", token).formParam("name", "ci").post("/console/account/api-keys").then()
                .statusCode(201).body(containsString("ci"));
        given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false).contentType(ContentType.URLENC)
                .header(ConsoleSessions.CSRF_HEADER, token).formParam("name", "deploy")
                .post("/console/account/api-keys").then().statusCode(201).body(containsString("deploy"));
        // signing out is a form too: without the token the session stays
        given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false).contentType(ContentType.URLENC)
                .post("/console/sign-out").then().statusCode(403);
        given().cookie(ConsoleSessions.COOKIE, cookie).get("/console/account").then().statusCode(200);
        given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false).contentType(ContentType.URLENC)
                .formParam("_csrf", token).post("/console/sign-out").then().statusCode(303);
        given().cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false).get("/console/account").then()
                .statusCode(303);
    }

    @Test
    void theSignInFormIsRefusedFromAnotherOrigin() {
        given().contentType(ContentType.URLENC).formParam("api_key", admin.key())
                .header("Origin", "https://evil.example").redirects().follow(false).post("/console/sign-in").then()
                .statusCode(403);
    }
}

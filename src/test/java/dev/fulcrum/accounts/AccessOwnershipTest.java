package dev.fulcrum.accounts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Who the caller is and what they may do is decided in {@code accounts} alone: no statement outside it names the tables
 * of users, keys, entities and memberships (they join the views of {@code V66__access_views.sql} instead), no other
 * package imports the console, the platform imports no feature, and every service says what went wrong by kind, never
 * by HTTP status.
 */
class AccessOwnershipTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");
    /** A table of accounts named where SQL names a table: after from, join, into, update, table or references. */
    private static final Pattern ACCOUNTS_TABLE = Pattern.compile(
            "\\b(?:from|join|into|update|table|references)\\s+(users|api_keys|entities|entity_members|access_epoch)\\b",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern CONSOLE_IMPORT = Pattern.compile("^import (static )?dev\\.fulcrum\\.console\\.",
            Pattern.MULTILINE);
    private static final Pattern FEATURE_IMPORT = Pattern
            .compile("^import (static )?dev\\.fulcrum\\.(?!platform\\.)[a-z]+\\.[\\w.]+;", Pattern.MULTILINE);
    private static final Pattern STATUS_EXCEPTION = Pattern
            .compile("new ApiException\\(|new InferenceFailure\\(\\s*\\d|InferenceFailure\\.upstream\\(\\s*\\d"
                    + "|jakarta\\.ws\\.rs\\.(WebApplicationException|NotFoundException|ForbiddenException"
                    + "|NotAuthorizedException|BadRequestException|ClientErrorException)");

    /**
     * What decides access outside {@code accounts}: setting the caller ({@code CurrentCaller}), reading the Bearer
     * header, or a role rule written as SQL.
     */
    private static final Pattern ACCESS_RULE = Pattern.compile(
            "^import dev\\.fulcrum\\.accounts\\.CurrentCaller;"
                    + "|\"Bearer \", 0, 7|startsWith\\(\"Bearer|role\\s*(=|in\\s*\\()\\s*'(ADMIN|MEMBER|VIEWER)'",
            Pattern.MULTILINE | Pattern.CASE_INSENSITIVE);

    private static List<Path> sources() throws IOException {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        }
    }

    private static String packageOf(Path source) {
        return SOURCES.relativize(source).getName(0).toString();
    }

    @Test
    void noStatementOutsideAccountsNamesItsTables() throws IOException {
        List<String> found = new ArrayList<>();
        int read = 0;
        for (Path source : sources()) {
            if (packageOf(source).equals("accounts")) {
                continue;
            }
            read++;
            Matcher table = ACCOUNTS_TABLE.matcher(Files.readString(source));
            while (table.find()) {
                found.add(SOURCES.relativize(source) + ": " + table.group());
            }
        }
        assertTrue(read > 200, "the sources are read: " + read);
        assertEquals(List.of(), found, "join account_names, entity_names, memberships or effective_roles instead");
    }

    @Test
    void theRuleFindsATableNamedInAStatement() {
        assertTrue(ACCOUNTS_TABLE.matcher("select 1 from entities e left join\n  entity_members m on").find());
        assertTrue(ACCOUNTS_TABLE.matcher("LEFT JOIN users u ON u.id = r.created_by").find());
        assertTrue(!ACCOUNTS_TABLE.matcher("left join account_names u on u.user_id = r.created_by").find());
    }

    @Test
    void noFeaturePackageImportsTheConsole() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path source : sources()) {
            if (!packageOf(source).equals("console") && CONSOLE_IMPORT.matcher(Files.readString(source)).find()) {
                found.add(SOURCES.relativize(source).toString());
            }
        }
        assertEquals(List.of(), found);
    }

    @Test
    void thePlatformImportsNoFeature() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path source : sources()) {
            if (packageOf(source).equals("platform")) {
                Matcher feature = FEATURE_IMPORT.matcher(Files.readString(source));
                while (feature.find()) {
                    found.add(SOURCES.relativize(source) + ": " + feature.group());
                }
            }
        }
        assertEquals(List.of(), found, "the platform is below every feature: declare in the documents, not here");
    }

    @Test
    void servicesRaiseDomainErrorsWithoutAnHttpStatus() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path source : sources()) {
            String name = SOURCES.relativize(source).toString();
            // the edge that turns kinds into statuses, the kinds themselves, and JAX-RS's parameter conversion (which
            // hands ErrorResponses a query value that is no number before any service runs)
            if (name.equals("platform/http/ErrorResponses.java") || name.equals("platform/errors/ApiException.java")
                    || name.equals("platform/http/NumericParams.java")) {
                continue;
            }
            if (STATUS_EXCEPTION.matcher(Files.readString(source)).find()) {
                found.add(name);
            }
        }
        assertEquals(List.of(), found);
    }

    @Test
    void accessIsDecidedInAccountsAlone() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path source : sources()) {
            if (packageOf(source).equals("accounts")) {
                continue;
            }
            Matcher rule = ACCESS_RULE.matcher(Files.readString(source));
            while (rule.find()) {
                found.add(SOURCES.relativize(source) + ": " + rule.group());
            }
        }
        assertEquals(List.of(), found,
                "ask Access (actAs, actFor, team, entity, writable), Authentication.bearer or Role.atLeastInSql");
    }

    @Test
    void theRuleFindsAnAccessDecision() {
        assertTrue(ACCESS_RULE.matcher("import dev.fulcrum.accounts.CurrentCaller;").find());
        assertTrue(ACCESS_RULE.matcher("authorization.regionMatches(true, 0, \"Bearer \", 0, 7)").find());
        assertTrue(ACCESS_RULE.matcher("coalesce(m.role = 'ADMIN' or x, false)").find());
        assertTrue(ACCESS_RULE.matcher("where m.role in ('ADMIN', 'MEMBER')").find());
        assertTrue(!ACCESS_RULE.matcher("Role.atLeastInSql(\"m.role\", Role.ADMIN)").find());
    }

    @Test
    void theRuleFindsAStatusNamedByAService() {
        assertTrue(STATUS_EXCEPTION.matcher("throw new InferenceFailure(503, \"Database unavailable\"").find());
        assertTrue(STATUS_EXCEPTION.matcher("throw new jakarta.ws.rs.NotFoundException()").find());
        assertTrue(!STATUS_EXCEPTION.matcher("new InferenceFailure(Kind.UNAVAILABLE, \"Database\"").find());
    }
}

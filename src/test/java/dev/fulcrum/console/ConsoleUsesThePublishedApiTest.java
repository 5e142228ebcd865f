package dev.fulcrum.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The console is a client of the published API: of the application's own code, its pages use only the interfaces and
 * models generated from openapi/*.yaml ({@code dev.fulcrum.*.api}), the API's error type, and what its sessions need
 * (the session store of {@code accounts}, the caller, the error table and configuration). No service, entity or
 * repository.
 */
class ConsoleUsesThePublishedApiTest {

    private static final Pattern IMPORT = Pattern.compile("^import (dev\\.fulcrum\\.[\\w.]+);", Pattern.MULTILINE);
    private static final Pattern GENERATED = Pattern.compile("dev\\.fulcrum\\.\\w+\\.api\\.(model\\.)?\\w+");
    private static final Set<String> SESSION_AND_ERRORS = Set.of("dev.fulcrum.accounts.AuthenticatesWithSession",
            "dev.fulcrum.accounts.Caller", "dev.fulcrum.accounts.ConsoleSessions",
            "dev.fulcrum.platform.errors.ApiException", "dev.fulcrum.platform.errors.ApiException.Violation",
            "dev.fulcrum.platform.http.ErrorResponses", "dev.fulcrum.platform.http.ErrorPages",
            "dev.fulcrum.platform.FulcrumConfig");

    @Test
    void pagesImportOnlyTheGeneratedApiOfTheApplication() throws IOException {
        List<String> private_ = new ArrayList<>();
        int files = 0;
        try (Stream<Path> sources = Files.list(Path.of("src/main/java/dev/fulcrum/console"))) {
            for (Path source : sources.toList()) {
                files++;
                Matcher imports = IMPORT.matcher(Files.readString(source));
                while (imports.find()) {
                    String imported = imports.group(1);
                    if (!GENERATED.matcher(imported).matches() && !SESSION_AND_ERRORS.contains(imported)) {
                        private_.add(source.getFileName() + ": " + imported);
                    }
                }
            }
        }
        assertTrue(files > 5, "the console's sources are read");
        assertEquals(List.of(), private_);
    }
}

package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.runs.api.model.Run;
import dev.fulcrum.runs.api.model.RunStateChange;
import dev.fulcrum.runs.api.model.RunStop;

/** The runs pages and the usage page (templates/console/runs.html, run.html, usage.html), checked when built. */
@CheckedTemplate(basePath = "console")
final class RunTemplates {

    /** The list's filters as the form sent them ("" when not given), and the page's place in the list. */
    public record Filters(String name, String creator, String state, int offset) {

        /** The query string of these filters at another offset. */
        public String at(int other) {
            StringBuilder query = new StringBuilder("?");
            if (!name.isEmpty()) {
                query.append("name=").append(Pages.path(name)).append('&');
            }
            if (!creator.isEmpty()) {
                query.append("creator=").append(Pages.path(creator)).append('&');
            }
            if (!state.isEmpty()) {
                query.append("state=").append(Pages.path(state)).append('&');
            }
            return query.append("offset=").append(other).toString();
        }

        public boolean isFiltered() {
            return !name.isEmpty() || !creator.isEmpty() || !state.isEmpty();
        }
    }

    /** One key of a run's config or summary with its value as compact JSON (text as it is). */
    public record Entry(String key, String value) {
    }

    /** Where a project's pages live. */
    public record Project(String entity, String name) {

        public String getPath() {
            return "/console/projects/" + Pages.path(entity) + "/" + Pages.path(name);
        }
    }

    private RunTemplates() {
    }

    static native TemplateInstance runs(Project project, Filters filters, List<Run> runs, Integer nextOffset,
            List<String> states);

    static native TemplateInstance run(Project project, Run run, List<Entry> config, List<Entry> summary,
            List<String> metrics, List<String> chosen, List<RunStateChange> changes, RunMediaPanel.Media media,
            RunStop stop, boolean stoppable);

    static native TemplateInstance usage(UsagePage.Report report);
}

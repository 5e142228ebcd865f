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

    private RunTemplates() {
    }

    static native TemplateInstance runs(RunPages.Project project, RunPages.Filters filters, List<Run> runs,
            Integer nextOffset, List<String> states);

    static native TemplateInstance run(RunPages.Project project, Run run, List<RunPages.Entry> config,
            List<RunPages.Entry> summary, List<String> metrics, List<String> chosen, List<RunStateChange> changes,
            RunMediaPanel.Media media, RunStop stop, boolean stoppable);

    static native TemplateInstance usage(UsagePage.Report report);
}

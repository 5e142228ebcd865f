package dev.fulcrum.console;

import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToLongFunction;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestQuery;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.api.ProjectsApi;
import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.accounts.api.model.Project;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.accounts.api.model.User;
import dev.fulcrum.inference.api.InferenceUsageApi;
import dev.fulcrum.inference.api.model.InferenceUsageReport;
import dev.fulcrum.inference.api.model.InferenceUsageRow;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Inference usage of a team or user (optionally one project) for a period: tokens and requests per day and model as
 * charts, and the report's rows with their latency columns, from {@code GET /api/v1/usage} (by day and model, and by
 * model for the period's totals).
 */
@Path("/console/usage")
@AuthenticatesWithSession
@Blocking
public class UsagePage {

    /** Longest period drawn day by day. */
    static final int MAX_DAYS = 3660;

    /**
     * The dates the form takes: four-digit years, as a date field in a browser offers (and the API takes, with a
     * month's room for the default period before the first).
     */
    static final LocalDate FIRST_DAY = LocalDate.of(1, 2, 1);
    static final LocalDate LAST_DAY = LocalDate.of(9999, 12, 30);

    @Inject
    InferenceUsageApi usage;

    @Inject
    UsersApi users;

    @Inject
    TeamsApi teams;

    @Inject
    ProjectsApi projects;

    @Inject
    ObjectMapper json;

    @Inject
    ConsoleRequest console;

    /**
     * What the page shows: the form's choices, the rows by day and model and by model, and the two charts' data (JSON
     * of {@code {"time":true,"x":[day starts, epoch seconds],"series":[{"name":model,"values":[...]}]}}).
     */
    public record Report(List<String> entities, String entity, List<String> projects, String project, String from,
            String to, List<InferenceUsageRow> byDay, List<InferenceUsageRow> byModel, String tokensChart,
            String requestsChart) {
    }

    /** A period the form cannot take is named under its field, and the default period is shown instead. */
    @GET
    public Response page(@RestQuery String entity, @RestQuery String project, @RestQuery String from,
            @RestQuery String to) {
        try {
            return Pages.html(RunTemplates.usage(report(entity, project, from, to)));
        } catch (Pages.FormException e) {
            console.failed(e.api());
            return Pages.again(422, () -> RunTemplates.usage(report(entity, project, null, null)));
        } catch (ApiException e) {
            return Pages.html(Pages.status(e), ConsoleTemplates.error(Pages.status(e), e.getMessage()));
        }
    }

    private Report report(String entityParam, String projectParam, String fromParam, String toParam) {
        User me = Pages.body(users.getMe());
        List<String> entities = new ArrayList<>();
        entities.add(me.getEntity());
        for (Team team : Pages.<List<Team>> body(teams.listTeams())) {
            entities.add(team.getName());
        }
        String entity = Pages.blankToNull(entityParam) == null ? me.getEntity() : entityParam.strip();
        if (!entities.contains(entity)) {
            entities.add(entity);
        }
        List<String> projectNames = new ArrayList<>();
        for (Project p : Pages.<List<Project>> body(projects.listProjects(entity))) {
            projectNames.add(p.getName());
        }
        String project = Pages.blankToNull(projectParam) == null ? null : projectParam.strip();
        if (project != null && !projectNames.contains(project)) {
            projectNames.add(project);
        }
        LocalDate today = LocalDate.now(ZoneOffset.UTC);
        LocalDate to = date("to", toParam, today);
        LocalDate from = date("from", fromParam, to.minusDays(29));
        if (from.isAfter(to)) {
            throw new Pages.FormException("from", "The period starts after it ends: " + from + " is after " + to);
        }
        if (ChronoUnit.DAYS.between(from, to) >= MAX_DAYS) {
            throw new Pages.FormException("from", "Choose a period of at most " + MAX_DAYS + " days");
        }
        // the form's "to" is the last day shown; the API's is the end, exclusive
        String end = to.plusDays(1).toString();
        InferenceUsageReport daily = Pages
                .body(usage.getInferenceUsage(entity, project, from.toString(), end, "day_model"));
        InferenceUsageReport models = Pages
                .body(usage.getInferenceUsage(entity, project, from.toString(), end, "model"));
        return new Report(entities, entity, projectNames, project == null ? "" : project, from.toString(),
                to.toString(), daily.getData(), models.getData(),
                chart(from, to, daily.getData(), InferenceUsageRow::getTotalTokens),
                chart(from, to, daily.getData(), InferenceUsageRow::getRequests));
    }

    private static LocalDate date(String field, String value, LocalDate otherwise) {
        if (value == null || value.isBlank()) {
            return otherwise;
        }
        LocalDate date;
        try {
            date = LocalDate.parse(value.strip());
        } catch (DateTimeParseException e) {
            throw new Pages.FormException(field, "Not a date (2026-01-31): " + value);
        }
        // ISO dates reach the year 999,999,999, where the day after (the API's exclusive end) does not exist
        if (date.isBefore(FIRST_DAY) || date.isAfter(LAST_DAY)) {
            throw new Pages.FormException(field, "Choose a date from " + FIRST_DAY + " to " + LAST_DAY + ": " + value);
        }
        return date;
    }

    /** A chart's series: the model, and the kind of Tinker work (its samples, its training) apart from completions. */
    static String series(InferenceUsageRow row) {
        return row.getKind() == null || row.getKind() == InferenceUsageRow.KindEnum.COMPLETION ? row.getModel()
                : row.getModel() + " (" + row.getKind() + ")";
    }

    /** One value per day of the period for each model (0 on a day without use), days as epoch seconds. */
    private String chart(LocalDate from, LocalDate to, List<InferenceUsageRow> rows,
            ToLongFunction<InferenceUsageRow> value) {
        int days = (int) ChronoUnit.DAYS.between(from, to) + 1;
        TreeSet<String> modelNames = new TreeSet<>();
        rows.forEach(row -> modelNames.add(series(row)));
        Map<String, long[]> series = new LinkedHashMap<>();
        modelNames.forEach(model -> series.put(model, new long[days]));
        for (InferenceUsageRow row : rows) {
            int day = (int) ChronoUnit.DAYS.between(from, row.getDay());
            if (day >= 0 && day < days) {
                series.get(series(row))[day] += value.applyAsLong(row);
            }
        }
        ObjectNode chart = json.createObjectNode().put("time", true);
        ArrayNode x = chart.putArray("x");
        for (int day = 0; day < days; day++) {
            x.add(from.plusDays(day).atStartOfDay().toEpochSecond(ZoneOffset.UTC));
        }
        ArrayNode drawn = chart.putArray("series");
        series.forEach((model, values) -> {
            ArrayNode column = drawn.addObject().put("name", model).putArray("values");
            for (long v : values) {
                column.add(v);
            }
        });
        try {
            return json.writeValueAsString(chart);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}

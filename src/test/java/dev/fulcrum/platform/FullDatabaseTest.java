package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import javax.sql.DataSource;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.LabTest;
import dev.fulcrum.support.PrometheusText;

/**
 * A full database disk, for real: the table of dataset rows is moved into a tablespace on a small tmpfs, which is then
 * filled to the last byte, so PostgreSQL cannot extend the table's file and answers SQLState 53100 (disk_full). The
 * datasets API refuses the write with its 507 (FastAPI's shape, checked against the contract), keeps no part of the
 * dataset, and makes it once the space is freed. The table goes back to its tablespace afterwards.
 */
@QuarkusTest
class FullDatabaseTest extends LabTest {

    @Inject
    DataSource dataSource;

    private RequestSpecification datasets() {
        return given().filter(Contract.DATASETS).auth().oauth2(member.key()).contentType(ContentType.JSON);
    }

    /** Rows large enough that the table must grow by pages (and its TOAST table too) to take them. */
    private static List<Map<String, Object>> rows(String mark, int count) {
        Random random = new Random(count);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            StringBuilder text = new StringBuilder();
            for (int j = 0; j < 3000; j++) {
                text.append((char) ('a' + random.nextInt(26)));
            }
            rows.add(Map.of("q", mark + " row " + i, "a", text.toString()));
        }
        return rows;
    }

    @Test
    void aDatasetWriteOnAFullDatabaseDiskIsA507AndLeavesNoDataset() throws Exception {
        Path mount = Files.createTempDirectory("fulcrum-full-database");
        SmallDisks.mountTmpfs(mount, "8m");
        try {
            Path space = Files.createDirectory(mount.resolve("tablespace"));
            sql("create tablespace fulcrum_full_disk location '" + space + "'");
            try {
                sql("alter table dataset_rows set tablespace fulcrum_full_disk");
                Path ballast = SmallDisks.fill(mount);
                String path = "/v2/" + team.name + "/full/datasets";
                List<Map<String, Object>> rows = rows(team.name, 200);
                double refused = PrometheusText.fetch().sum("fulcrum_storage_full_total", Map.of("store", "database"));

                datasets().body(Map.of("name", "qa", "rows", rows)).post(path).then().statusCode(507).body("detail",
                        containsString("storage is full"));

                assertEquals(refused + 1,
                        PrometheusText.fetch().sum("fulcrum_storage_full_total", Map.of("store", "database")));
                datasets().get(path + "/qa/versions/latest").then().statusCode(404);
                assertEquals(0, count("select count(*) from dataset_rows where val like '%" + team.name + " row %'"));

                Files.delete(ballast);
                datasets().body(Map.of("name", "qa", "rows", rows)).post(path).then().statusCode(200);
                datasets().get(path + "/qa/versions/latest").then().statusCode(200).body("object_id", equalTo("qa"));
            } finally {
                sql("alter table dataset_rows set tablespace pg_default");
                sql("drop tablespace fulcrum_full_disk");
            }
        } finally {
            SmallDisks.unmount(mount);
            try (Stream<Path> paths = Files.walk(mount)) {
                paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private void sql(String statement) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement s = connection.createStatement()) {
            s.execute(statement);
        }
    }

    private long count(String query) throws SQLException {
        try (Connection connection = dataSource.getConnection();
                Statement s = connection.createStatement();
                ResultSet result = s.executeQuery(query)) {
            result.next();
            return result.getLong(1);
        }
    }
}

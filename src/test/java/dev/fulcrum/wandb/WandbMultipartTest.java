package dev.fulcrum.wandb;

import static dev.fulcrum.wandb.WandbGraphqlTest.graphql;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.artifacts.ArtifactDraftSweeper;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;

/**
 * The SDK's multipart upload of an artifact file, call by call (the SDK itself does it only for files of 2 GiB and
 * more: {@code WandbSdkTest} logs one): parts in any order, each checked against its Content-MD5, joined at completion
 * when every ETag matches, and the version made from the joined file; uploads never completed are aborted by the
 * sweeper.
 */
@QuarkusTest
public class WandbMultipartTest {

    /** The W&B SDK's mutations that make an artifact draft and its files' upload URLs (also {@code FullDiskTest}'s). */
    public static final String CREATE_ARTIFACT = """
            mutation CreateArtifact($input: CreateArtifactInput!) { createArtifact(input: $input) { artifact { id } } }""";
    public static final String CREATE_FILES = """
            mutation CreateArtifactFiles($artifactFiles: [CreateArtifactFileSpecInput!]!,
                                         $storageLayout: ArtifactStorageLayout!) {
              createArtifactFiles(input: {artifactFiles: $artifactFiles, storageLayout: $storageLayout}) {
                files { edges { node { storagePath uploadUrl uploadHeaders
                  uploadMultipartUrls { uploadID uploadUrlParts { partNumber uploadUrl } } artifact { id } } } }
              }
            }""";
    static final String COMPLETE = """
            mutation CompleteMultipartUploadArtifact($completeMultipartAction: CompleteMultipartAction!,
                $completedParts: [UploadPartsInput!]!, $artifactID: ID!, $storagePath: String!, $uploadID: String!) {
              completeMultipartUploadArtifact(input: {completeMultipartAction: $completeMultipartAction,
                  completedParts: $completedParts, artifactID: $artifactID, storagePath: $storagePath,
                  uploadID: $uploadID}) { digest }
            }""";

    @Inject
    Fixtures fixtures;

    @Inject
    BlobStore blobs;

    @Inject
    ArtifactDraftSweeper sweeper;

    @Inject
    EntityManager em;

    @Test
    void partsAreJoinedIntoTheFileOfTheVersion() throws Exception {
        Account member = fixtures.user("parts");
        byte[][] parts = { fill('a', 1000), fill('b', 1000), fill('c', 10) };
        byte[] whole = concat(parts);
        String md5 = Base64.getEncoder().encodeToString(md5(whole));
        String draft = createArtifact(member);
        JsonPath node = createFiles(member, draft, "big.bin", md5, parts);
        String uploadId = node.getString("uploadMultipartUrls.uploadID");
        List<String> urls = node.getList("uploadMultipartUrls.uploadUrlParts.uploadUrl");
        assertEquals(List.of(1, 2, 3), node.getList("uploadMultipartUrls.uploadUrlParts.partNumber"));

        // the last part first; a part whose MD5 is not its Content-MD5 is refused; a bad signature too
        List<String> etags = new ArrayList<>(List.of("", "", ""));
        etags.set(2, putPart(urls.get(2), parts[2]));
        given().filter(Contract.of("wandb")).header("Content-MD5", Base64.getEncoder().encodeToString(md5(parts[1])))
                .contentType("application/octet-stream").body(parts[0]).put(urls.get(0)).then().statusCode(422);
        given().filter(Contract.of("wandb")).contentType("application/octet-stream").body(parts[0])
                .put(urls.get(0).replace("signature=", "signature=x")).then().statusCode(403);
        // completing before every part is there: 422, and the upload stays open
        complete(member, draft, node.getString("storagePath"), uploadId, etags).then().statusCode(422)
                .body("errors[0].message", containsString("was not uploaded"));
        etags.set(0, putPart(urls.get(0), parts[0]));
        etags.set(1, putPart(urls.get(1), parts[1]));
        assertEquals("\"" + HexFormat.of().formatHex(md5(parts[1])) + "\"", etags.get(1));
        complete(member, draft, node.getString("storagePath"), uploadId, etags).then().statusCode(200)
                .body("data.completeMultipartUploadArtifact.digest", equalTo(md5));

        String sha256 = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(whole));
        try (InputStream in = blobs.open(sha256, 0, whole.length)) {
            assertArrayEquals(whole, in.readAllBytes());
        }
        // the manifest names the file: the commit makes the version of it
        String manifestUrl = graphql(member, """
                mutation M($input: CreateArtifactManifestInput!) {
                  createArtifactManifest(input: $input) { artifactManifest { file { uploadUrl } } }
                }""",
                Map.of("input",
                        Map.of("artifactID", draft, "name", "wandb_manifest.json", "digest", "x", "entityName",
                                member.name(), "projectName", "p", "runName", "r"))).then().statusCode(200).extract()
                                        .path("data.createArtifactManifest.artifactManifest.file.uploadUrl");
        given().contentType("application/octet-stream")
                .body(("{\"version\": 1, \"storagePolicy\": \"wandb-storage-policy-v1\", \"contents\": {\"big.bin\": "
                        + "{\"digest\": \"" + md5 + "\", \"size\": " + whole.length + "}}}")
                                .getBytes(StandardCharsets.UTF_8))
                .put(manifestUrl).then().statusCode(200);
        graphql(member,
                "mutation C($input: CommitArtifactInput!) { commitArtifact(input: $input) { artifact { id state size } } }",
                Map.of("input", Map.of("artifactID", draft))).then().statusCode(200)
                        .body("data.commitArtifact.artifact.state", equalTo("COMMITTED"))
                        .body("data.commitArtifact.artifact.size", equalTo(whole.length));
    }

    @Test
    void uploadsNeverCompletedAreAbortedBySweeping() throws Exception {
        Account member = fixtures.user("parts-sweep");
        byte[][] parts = { fill('x', 100), fill('y', 5) };
        String draft = createArtifact(member);
        JsonPath node = createFiles(member, draft, "left.bin", Base64.getEncoder().encodeToString(md5(concat(parts))),
                parts);
        putPart(node.getString("uploadMultipartUrls.uploadUrlParts[0].uploadUrl"), parts[0]);
        long id = Long.parseLong(node.getString("uploadMultipartUrls.uploadID"));
        String storeId = QuarkusTransaction.requiringNew().call(() -> {
            em.createNativeQuery(
                    "update artifact_multipart_uploads set created_at = now() - interval '2 hours' where id = ?1")
                    .setParameter(1, id).executeUpdate();
            return (String) em.createNativeQuery("select store_id from artifact_multipart_uploads where id = ?1")
                    .setParameter(1, id).getSingleResult();
        });

        sweeper.sweep(Duration.ofHours(1));

        QuarkusTransaction.requiringNew()
                .run(() -> assertEquals(0L,
                        ((Number) em.createNativeQuery("select count(*) from artifact_multipart_uploads where id = ?1")
                                .setParameter(1, id).getSingleResult()).longValue()));
        assertThrows(IOException.class, () -> blobs.completeParts(storeId, 1, 1000, blob -> {
        }));
        putPartStatus(node.getString("uploadMultipartUrls.uploadUrlParts[1].uploadUrl"), parts[1], 404);
    }

    @Test
    void partsMustBeNumberedOneToN() {
        Account member = fixtures.user("parts-bad");
        String draft = createArtifact(member);
        graphql(member, CREATE_FILES, Map.of("storageLayout", "V2", "artifactFiles",
                List.of(Map.of("artifactID", draft, "name", "f", "md5", "x", "uploadPartsInput",
                        List.of(Map.of("partNumber", 1, "hexMD5", "a"), Map.of("partNumber", 3, "hexMD5", "b"))))))
                                .then().statusCode(422).body("errors[0].message", containsString("numbered 1 to 2"));
    }

    @Test
    void aPartMustDeclareItsLength() throws Exception {
        Account member = fixtures.user("parts-chunked");
        byte[][] parts = { fill('c', 10) };
        String draft = createArtifact(member);
        JsonPath node = createFiles(member, draft, "chunked.bin", Base64.getEncoder().encodeToString(md5(parts[0])),
                parts);
        // a body of unknown length goes chunked, as S3 refuses it
        HttpResponse<String> answer = HttpClient.newHttpClient().send(HttpRequest
                .newBuilder(URI.create(node.getString("uploadMultipartUrls.uploadUrlParts[0].uploadUrl")))
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(parts[0]))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(422, answer.statusCode(), answer.body());
        assertTrue(answer.body().contains("Content-Length"), answer.body());
    }

    private static String createArtifact(Account member) {
        return graphql(member, CREATE_ARTIFACT,
                Map.of("input",
                        Map.of("entityName", member.name(), "projectName", "p", "artifactTypeName", "model",
                                "artifactCollectionName", "big", "digest", "d"))).then().statusCode(200).extract()
                                        .path("data.createArtifact.artifact.id");
    }

    private static JsonPath createFiles(Account member, String draft, String name, String md5, byte[][] parts)
            throws Exception {
        List<Map<String, Object>> input = new ArrayList<>();
        for (int i = 0; i < parts.length; i++) {
            input.add(Map.of("partNumber", i + 1, "hexMD5", HexFormat.of().formatHex(md5(parts[i]))));
        }
        return new JsonPath(graphql(member, CREATE_FILES,
                Map.of("storageLayout", "V2", "artifactFiles",
                        List.of(Map.of("artifactID", draft, "name", name, "md5", md5, "uploadPartsInput", input))))
                                .then().statusCode(200).extract().asString())
                                        .setRootPath("data.createArtifactFiles.files.edges[0].node");
    }

    private static String putPart(String url, byte[] part) throws Exception {
        return given().filter(Contract.of("wandb")).header("Content-MD5", Base64.getEncoder().encodeToString(md5(part)))
                .contentType("application/octet-stream").body(part).put(url).then().statusCode(200).extract()
                .header("ETag");
    }

    private static void putPartStatus(String url, byte[] part, int status) {
        given().filter(Contract.of("wandb")).contentType("application/octet-stream").body(part).put(url).then()
                .statusCode(status);
    }

    private static io.restassured.response.Response complete(Account member, String draft, String storagePath,
            String uploadId, List<String> etags) {
        List<Map<String, Object>> parts = new ArrayList<>();
        for (int i = 0; i < etags.size(); i++) {
            parts.add(Map.of("partNumber", i + 1, "hexMD5", etags.get(i)));
        }
        return graphql(member, COMPLETE, Map.of("completeMultipartAction", "Complete", "completedParts", parts,
                "artifactID", draft, "storagePath", storagePath, "uploadID", uploadId));
    }

    private static byte[] fill(char c, int n) {
        byte[] bytes = new byte[n];
        Arrays.fill(bytes, (byte) c);
        return bytes;
    }

    private static byte[] concat(byte[][] parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    private static byte[] md5(byte[] bytes) throws Exception {
        return MessageDigest.getInstance("MD5").digest(new ByteArrayInputStream(bytes).readAllBytes());
    }
}

package dev.fulcrum.training;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import jakarta.ws.rs.core.MultivaluedHashMap;
import jakarta.ws.rs.core.MultivaluedMap;

import org.jboss.resteasy.reactive.multipart.FileUpload;

/** A file written to a temporary path, handed to the artifact service as if it had been uploaded. */
record TempFile(String fileName, Path filePath) implements FileUpload, AutoCloseable {

    static TempFile of(String fileName, byte[] content) {
        try {
            Path path = Files.createTempFile("fulcrum-checkpoint-", ".bin");
            Files.write(path, content);
            return new TempFile(fileName, path);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String name() {
        return "file";
    }

    @Override
    public long size() {
        try {
            return Files.size(filePath);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String contentType() {
        return "application/octet-stream";
    }

    @Override
    public String charSet() {
        return null;
    }

    @Override
    public MultivaluedMap<String, String> getHeaders() {
        return new MultivaluedHashMap<>();
    }

    @Override
    public void close() {
        try {
            Files.deleteIfExists(filePath);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

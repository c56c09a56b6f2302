/*
 * RestCatalogServerMain: a real Apache Paimon REST catalog server for the tests. It runs Paimon
 * 2.0.0's own test server, org.apache.paimon.rest.RESTCatalogServer (paimon-core:2.0.0, classifier
 * tests, from Maven Central; an okhttp MockWebServer whose dispatcher implements the REST catalog
 * API over a filesystem catalog), with bearer-token authentication, on an address we choose.
 *
 * Not part of the harness's Maven build (that jar is not on the harness classpath):
 * scripts/services/rest-catalog compiles this file with javac and runs it. By hand:
 *
 *   REST_TOKEN=secret java -cp CLASSES:JARS org.paimonwire.compat.RestCatalogServerMain \
 *       --data-path DIR --warehouse NAME [--host 127.0.0.1] [--port 0] [--uri-file F]
 *       [--token-file F] [--prefix paimon] [--config-default KEY=VALUE]...
 *
 * The token comes from --token-file (first line) or the environment variable REST_TOKEN; it is
 * never printed. --port 0 (the default) takes a free port. When the server listens, it prints
 * one line REST_URI=http://HOST:PORT (and writes it to --uri-file). It runs until killed;
 * SIGTERM shuts the listener down cleanly.
 *
 * What the server is: the catalog lives on the local filesystem under --data-path (the test
 * server opens it with LocalFileIO, whatever the path says; it cannot keep tables on S3).
 * GET /v1/config answers only for ?warehouse=NAME (another name: 404, empty body; none: 500).
 * Every request without exactly "Authorization: Bearer TOKEN" gets 401 with an empty body.
 * Commits (POST .../tables/T/commit) are done by the server itself: it writes the client's
 * snapshot with Paimon's RenamingSnapshotCommit (atomic rename) inside a synchronized method
 * (a client whose snapshot lost the race gets success=false and retries). Its other state
 * (databases, tables, a log of every request's headers) sits in plain HashMaps and ArrayLists
 * that MockWebServer's connection threads share, so this program serializes all requests and
 * clears that header log after each one (it would grow without bound). An exception the test
 * server does not map to an error answer would drop the connection unanswered (its catch-all
 * handler fails on an exception without a cause): we answer 500 with a Paimon ErrorResponse.
 * Each request line (method, path, status; never a header) goes to stderr.
 */
package org.paimonwire.compat;

import org.apache.paimon.rest.RESTApi;
import org.apache.paimon.rest.RESTCatalogServer;
import org.apache.paimon.rest.auth.BearTokenAuthProvider;
import org.apache.paimon.rest.responses.ConfigResponse;
import org.apache.paimon.rest.responses.ErrorResponse;

import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

public final class RestCatalogServerMain {

    private RestCatalogServerMain() {}

    /** A Paimon ErrorResponse (JSON, code 500), as the server's own error answers are. */
    private static MockResponse error(Exception e) {
        String body;
        try {
            body = RESTApi.toJson(new ErrorResponse(null, null, String.valueOf(e), 500));
        } catch (Exception json) {
            body = "";
        }
        return new MockResponse()
                .setResponseCode(500)
                .setHeader("Content-Type", "application/json")
                .setBody(body);
    }

    public static void main(String[] args) throws Exception {
        String dataPath = null;
        String warehouse = null;
        String host = "127.0.0.1";
        int port = 0;
        String uriFile = null;
        String tokenFile = null;
        String prefix = "paimon";
        Map<String, String> defaults = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String key = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(key + " needs a value");
            }
            String value = args[++i];
            switch (key) {
                case "--data-path": dataPath = value; break;
                case "--warehouse": warehouse = value; break;
                case "--host": host = value; break;
                case "--port": port = Integer.parseInt(value); break;
                case "--uri-file": uriFile = value; break;
                case "--token-file": tokenFile = value; break;
                case "--prefix": prefix = value; break;
                case "--config-default":
                    int eq = value.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("--config-default is KEY=VALUE");
                    }
                    defaults.put(value.substring(0, eq), value.substring(eq + 1));
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument " + key);
            }
        }
        if (dataPath == null || warehouse == null) {
            throw new IllegalArgumentException("--data-path and --warehouse are required");
        }
        String token =
                tokenFile != null
                        ? new String(Files.readAllBytes(Paths.get(tokenFile)), StandardCharsets.UTF_8)
                                .split("\\R", 2)[0].trim()
                        : System.getenv("REST_TOKEN");
        if (token == null || token.isEmpty()) {
            throw new IllegalArgumentException("no token: give --token-file or set REST_TOKEN");
        }

        // What GET /v1/config returns; clients merge these defaults under their own options.
        // "prefix" puts every resource under /v1/PREFIX/ (Paimon's own tests use "paimon").
        defaults.put("prefix", prefix);
        defaults.put("warehouse", warehouse);
        ConfigResponse config = new ConfigResponse(defaults, Collections.emptyMap());

        BearTokenAuthProvider auth = new BearTokenAuthProvider(token);
        RESTCatalogServer catalogServer = new RESTCatalogServer(dataPath, auth, config, warehouse);
        // RESTCatalogServer.start() listens on "localhost" at a random port; we run its
        // dispatcher in a MockWebServer of our own, on the address and port we were given.
        Dispatcher inner = catalogServer.initDispatcher(auth);
        Dispatcher serialized =
                new Dispatcher() {
                    @Override
                    public synchronized MockResponse dispatch(RecordedRequest request)
                            throws InterruptedException {
                        MockResponse response;
                        try {
                            response = inner.dispatch(request);
                        } catch (RuntimeException e) {
                            // The test server's catch-all handler reads e.getCause().getMessage()
                            // and throws again when there is no cause; MockWebServer then drops
                            // the connection without an answer. Answer 500 with the error instead.
                            response = error(e);
                        }
                        catalogServer.clearReceivedHeaders();
                        // the request line only: never the headers (they carry the token)
                        System.err.println(
                                request.getMethod() + " " + request.getPath() + " -> "
                                        + response.getStatus());
                        return response;
                    }
                };
        MockWebServer server = new MockWebServer();
        server.setDispatcher(serialized);
        server.start(InetAddress.getByName(host), port);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        server.shutdown();
                                    } catch (Exception e) {
                                        System.err.println("shutdown: " + e);
                                    }
                                    stopped.countDown();
                                }));

        String hostPart = host.contains(":") ? "[" + host + "]" : host;
        String line = "REST_URI=http://" + hostPart + ":" + server.getPort();
        if (uriFile != null) {
            // written whole, then renamed: a reader never sees half a line
            java.nio.file.Path tmp = Paths.get(uriFile + ".tmp");
            Files.write(tmp, (line + "\n").getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, Paths.get(uriFile), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        System.out.println(line);
        System.out.flush();
        stopped.await();
    }
}

// The journey of bench/journey_vs_peers.sh for Gatling (Java DSL, Gatling 3.13): log in ONCE
// (the before() hook, a plain java.net.http call; the token goes to a static field that every
// virtual user reads), then POST /items (201, save $.id) -> GET /items/#{id} (200) ->
// DELETE /items/#{id} (204), each status checked.
//
//   javac -cp "LIB/*" -d CLASSES JourneySimulation.java
//   java [the JVM flags bench/journey_vs_peers.sh passes, see there] \
//        -cp "CLASSES:bench/journey/gatling:LIB/*" -Djourney.url=http://127.0.0.1:PORT \
//        -Djourney.mode=rate -Djourney.rate=200 -Djourney.duration=10 \
//        io.gatling.app.Gatling -s JourneySimulation -nr -rf OUT/results
//
// journey.mode (system property):
//   rate:     constantUsersPerSec(journey.rate).during(journey.duration): open model, a new
//             virtual user per journey at a steady rate, no cap on users in flight (as
//             Artillery's arrivalRate); each user has its own connection, so every journey
//             opens one (as Artillery's default, no pool).
//   closed:   atOnceUsers(journey.users), each looping the journey back to back in
//             during(journey.duration, exitASAP=false): a journey in progress at the end is
//             finished, none is started after it (as Artillery's `again` loop). Each user keeps
//             its keep-alive connection.
//   baseline: constantUsersPerSec(1).during(1): one journey; its CPU is the start-up cost.
// A step whose check fails (status, missing id) is KO in Gatling's stats and ends that journey
// (exitBlockOnFail, as the locustfile returns); the user then goes on with its next journey.
// Completed journeys = "delete" requests OK (status 204 checked). The bench script turns off
// Gatling's usage analytics and HTTP warm-up (gatling.conf beside this file, on the class path)
// so that nothing but 127.0.0.1 is contacted.

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class JourneySimulation extends Simulation {
  static final String URL = System.getProperty("journey.url", "http://127.0.0.1:8080");
  static final String MODE = System.getProperty("journey.mode", "rate");
  static final int RATE = Integer.getInteger("journey.rate", 100);
  static final int USERS = Integer.getInteger("journey.users", 50);
  static final int D = Integer.getInteger("journey.duration", 10);

  static volatile String auth; // "Bearer <token>", set once in before()

  @Override
  public void before() {
    if (!URL.matches("http://127\\.0\\.0\\.1:[0-9]+")) {
      throw new IllegalArgumentException("journey: refusing to target " + URL + " (only http://127.0.0.1:PORT)");
    }
    try {
      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      HttpRequest req = HttpRequest.newBuilder(URI.create(URL + "/login"))
          .timeout(Duration.ofSeconds(5))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"user\":\"bench\",\"password\":\"bench\"}"))
          .build();
      HttpResponse<String> resp = client.send(req, HttpResponse.BodyHandlers.ofString());
      Matcher m = Pattern.compile("\"access_token\"\\s*:\\s*\"([^\"]+)\"").matcher(resp.body());
      if (resp.statusCode() != 200 || !m.find()) {
        throw new IllegalStateException("status " + resp.statusCode() + ", body " + resp.body());
      }
      auth = "Bearer " + m.group(1);
      System.out.println("journey: logged in once; mode " + MODE);
    } catch (Exception e) {
      throw new IllegalStateException("journey: POST " + URL + "/login failed: " + e, e);
    }
  }

  static final ChainBuilder JOURNEY =
      exec(session -> session.markAsSucceeded()) // a failed journey must not end the next one
          .exitBlockOnFail()
          .on(
              exec(http("create").post("/items")
                      .header("Authorization", session -> auth)
                      .body(StringBody("{\"name\":\"x\"}")).asJson()
                      .check(status().is(201), jsonPath("$.id").saveAs("id")))
                  .exec(http("read").get("/items/#{id}")
                      .header("Authorization", session -> auth)
                      .check(status().is(200)))
                  .exec(http("delete").delete("/items/#{id}")
                      .header("Authorization", session -> auth)
                      .check(status().is(204))));

  {
    HttpProtocolBuilder protocol = http.baseUrl(URL).disableWarmUp();
    PopulationBuilder population;
    switch (MODE) {
      case "rate":
        population = scenario("journey").exec(JOURNEY)
            .injectOpen(constantUsersPerSec(RATE).during(Duration.ofSeconds(D)));
        break;
      case "closed":
        population = scenario("journey").exec(during(Duration.ofSeconds(D), false).on(JOURNEY))
            .injectOpen(atOnceUsers(USERS));
        break;
      case "baseline":
        population = scenario("journey").exec(JOURNEY)
            .injectOpen(constantUsersPerSec(1).during(Duration.ofSeconds(1)));
        break;
      default:
        throw new IllegalArgumentException("journey.mode must be rate, closed or baseline (got " + MODE + ")");
    }
    // a safety net only: every run is also under the bench script's timeout
    setUp(population).protocols(protocol).maxDuration(Duration.ofSeconds(D + 20L));
  }
}

from starlette.testclient import TestClient

from serving.app import create_app
from serving.registry import ModelRegistry


def test_an_unexpected_error_fails_its_request_with_a_json_500_only(shout_served, monkeypatch):
    registry = ModelRegistry([shout_served])
    with TestClient(create_app(registry), raise_server_exceptions=False) as client:
        real_get = registry.get

        def broken_get(name, version):
            if name == "broken":
                raise RuntimeError("a bug")
            return real_get(name, version)

        monkeypatch.setattr(registry, "get", broken_get)
        answer = client.post("/v1/models/broken:predict", json={"instances": ["a"]})
        assert answer.status_code == 500
        assert answer.json() == {"error": "internal error: RuntimeError"}
        answer = client.post("/v1/models/shout:predict", json={"instances": ["a"]})
        assert answer.json() == {"predictions": ["<A>"]}

"""Read an admin page's form as a browser would submit it, so a test can change one field and post the rest."""

from __future__ import annotations

from html.parser import HTMLParser


class _FormParser(HTMLParser):
    def __init__(self, form_id: str | None) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id, self.inside, self.data = form_id, False, {}
        self._textarea: str | None = None
        self._select: str | None = None
        self._select_multiple = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and (self.form_id is None or attrs.get("id") == self.form_id):
            self.inside = True
        if not self.inside:
            return
        name = attrs.get("name")
        if tag == "input" and name:
            kind = attrs.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in attrs:
                    self.data[name] = attrs.get("value", "on")
            elif kind not in ("submit", "button", "file", "image"):
                self.data[name] = attrs.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""
        elif tag == "select" and name:
            self._select = name
            self.data.setdefault(name, "")
        elif tag == "option" and self._select and "selected" in attrs:
            self.data[self._select] = attrs.get("value", "")

    def handle_endtag(self, tag):
        if tag == "form" and self.inside:
            self.inside = False
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            # The first newline after <textarea> is not part of the value (HTML parsing rules).
            self.data[self._textarea] += data if self.data[self._textarea] else data.removeprefix("\n")


def form_data(response, form_id: str | None = None) -> dict[str, str]:
    """Every successful control of the page's (first or named) form, with its current value."""
    parser = _FormParser(form_id)
    parser.feed(response.content.decode())
    return parser.data


def change_form_data(client, url: str, **changes) -> dict[str, str]:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    model_name = url.strip("/").split("/")[-3]
    data = form_data(response, f"{model_name}_form")
    data.pop("csrfmiddlewaretoken", None)
    return data | {"_save": "Save"} | {name: str(value) for name, value in changes.items()}


def changelist_data(client, url: str, **changes) -> dict[str, str]:
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    data = form_data(response, "changelist-form")
    data.pop("csrfmiddlewaretoken", None)
    for name in [name for name in data if name.startswith("action") or name == "select_across" or name == "index"]:
        data.pop(name)
    return data | {"_save": "Save"} | {name: str(value) for name, value in changes.items()}

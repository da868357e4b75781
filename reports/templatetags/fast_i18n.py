"""Django's {% translate %} and {% blocktranslate %} with the same syntax and output, for less work per render.

Loaded after `i18n` (``{% load i18n fast_i18n %}``), these tags replace Django's in that template; makemessages finds
them as it finds Django's (it reads the tag names, not the library), so the message catalog stays what it was.

A report page renders some 130 {% translate "…" %} of a constant text and 70 {% blocktranslate %}. Django's
translate takes a lazy detour for each: a lazy proxy of gettext, that proxy turned into text by the template's
value rendering (localize, escaping), two mark_safe; about 75 Python calls for one word. A constant text needs only
gettext and the same percent-sign handling: TranslateNode below does that (about 20 calls) and leaves every other
form (a variable, a filter, noop, a context that is not a constant) to Django. Django's blocktranslate builds its
msgid again from the tag's tokens at every render; BlockTranslateNode builds it once, at parse time.

`tests/test_fast_i18n.py` renders each form with both tag sets and compares the output.
"""

from __future__ import annotations

from django import template
from django.template import Variable
from django.templatetags import i18n
from django.utils import translation
from django.utils.safestring import SafeString

register = template.Library()


class TranslateNode(i18n.TranslateNode):
    """{% translate "constant text" [context "constant"] [as var] %}: gettext (pgettext) straight to safe text."""

    def __init__(self, filter_expression, noop, asvar=None, message_context=None):
        super().__init__(filter_expression, noop, asvar, message_context)
        # What Django's Variable looks up: the literal with its percent signs doubled (Variable.resolve).
        self.msgid = self.filter_expression.var.literal.replace("%", "%%")
        self.context_text = None if message_context is None else str(message_context.var)

    def render(self, context):
        if self.context_text is None:
            text = translation.gettext(self.msgid)
        else:
            text = translation.pgettext(self.context_text, self.msgid)
        # A literal's translation is safe text in Django's tag too (the literal is marked safe, gettext keeps that);
        # the doubled percent signs are restored as TranslateNode.render does.
        value = SafeString(text.replace("%%", "%"))
        if self.asvar:
            context[self.asvar] = value
            return ""
        return value


def _is_constant_text(filter_expression) -> bool:
    var = filter_expression.var
    return (isinstance(var, Variable) and var.lookups is None and isinstance(var.literal, str)
            and not var.translate and not filter_expression.filters)


@register.tag("translate")
@register.tag("trans")
def do_translate(parser, token):
    node = i18n.do_translate(parser, token)
    context = node.message_context
    if (node.noop or not _is_constant_text(node.filter_expression)
            or (context is not None and (context.is_var or context.filters))):
        return node  # a variable, a filter, noop or a context that is looked up: Django's own node
    return TranslateNode(node.filter_expression, node.noop, node.asvar, node.message_context)


class BlockTranslateNode(i18n.BlockTranslateNode):
    """Django's blocktranslate, its singular and plural msgids (and their variable names) built once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.token_lists = {id(tokens): super(BlockTranslateNode, self).render_token_list(tokens)
                            for tokens in (self.singular, self.plural) if tokens is not None}

    def render_token_list(self, tokens):
        msgid, names = self.token_lists[id(tokens)]
        return msgid, list(names)  # render() extends the singular's list with the plural's


@register.tag("blocktranslate")
@register.tag("blocktrans")
def do_block_translate(parser, token):
    node = i18n.do_block_translate(parser, token)
    return BlockTranslateNode(node.extra_context, node.singular, node.plural, node.countervar, node.counter,
                              node.message_context, node.trimmed, node.asvar, node.tag_name)

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.contrib.sitemaps import views as sitemap_views
from django.urls import include, path

from reports.sitemaps import SITEMAPS
from reports.views import cache_per_catalog_version, robots_txt

# Outside i18n_patterns: one robots.txt and one sitemap index for both languages (the sitemaps list /de/ and /en/).
urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("api.urls")),
    path("robots.txt", robots_txt, name="robots"),
    path("sitemap.xml", cache_per_catalog_version(sitemap_views.index),
         {"sitemaps": SITEMAPS, "sitemap_url_name": "sitemap-section"}, name="sitemap-index"),
    path("sitemap-<slug:section>.xml", cache_per_catalog_version(sitemap_views.sitemap),
         {"sitemaps": SITEMAPS}, name="sitemap-section"),
]

urlpatterns += i18n_patterns(
    path("", include("reports.urls")),
    prefix_default_language=True,
)

handler404 = "reports.views.page_not_found"

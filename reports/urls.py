from django.urls import path

from reports import views, views_methodology

app_name = "reports"

urlpatterns = [
    path("", views.home, name="home"),
    path("methodology/", views_methodology.methodology, name="methodology"),
    path("search/", views.search, name="search"),
    path("model/<slug:model_slug>/", views.model, name="model"),
    path("hardware/<slug:hardware_slug>/", views.hardware, name="hardware"),
    path("report/<slug:model_slug>/<slug:hardware_slug>/", views.report, name="report"),
    path("config/", views.config_new, name="config_new"),
    path("config/<slug:config_hash>/<slug:hardware_slug>/", views.config_report, name="config_report"),
    path("compare/<slug:model_slug>/", views.compare, name="compare"),
]

var app = WebApplication.CreateBuilder(args).Build();
app.MapGet("/", () => "inventory");
app.Run();
